"""The ValidatingAdmissionPolicy that ships with the CRD (``deploy/crds/policy.yaml``): the rules a CRD cannot hold
within its CEL cost limit."""

from __future__ import annotations

from typing import Any

from rollwise.api.validation_cel import key_validations
from rollwise.cluster.crd import CR_GROUP, CR_VERSION

__all__ = ["POLICY_NAME", "policy"]

POLICY_NAME = "rollwise-statefulset-keys"


def policy() -> list[dict[str, Any]]:
    """The ValidatingAdmissionPolicy and its binding that check what the CRD cannot within its cost limit: the keys
    of the set's label and annotation maps (``api/validation_cel.KEY_MAPS``)."""
    labels = {"app.kubernetes.io/name": "rollwise"}
    return [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
         "metadata": {"name": POLICY_NAME, "labels": labels},
         "spec": {"failurePolicy": "Fail",
                  "matchConstraints": {"resourceRules": [{
                      "apiGroups": [CR_GROUP], "apiVersions": [CR_VERSION], "operations": ["CREATE", "UPDATE"],
                      "resources": ["statefulsets"]}]},
                  "validations": key_validations()}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
         "metadata": {"name": POLICY_NAME, "labels": labels},
         "spec": {"policyName": POLICY_NAME, "validationActions": ["Deny"]}},
    ]
