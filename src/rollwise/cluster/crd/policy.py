"""The ValidatingAdmissionPolicy that ships with the CRD (``deploy/crds/policy.yaml``): the rules a CRD cannot hold
within its CEL cost limit."""

from __future__ import annotations

from typing import Any

from rollwise.api.strategies import ON_DELETE, QUORUM_AWARE_POLICY, ROLLING_BLOCK, UPDATE_POLICY
from rollwise.api.validation_cel import key_validations
from rollwise.cluster.crd.statefulset import CR_GROUP, CR_VERSION

__all__ = ["POLICY_NAME", "policy", "quorum_block_validation"]

POLICY_NAME = "rollwise-statefulset-keys"


def policy() -> list[dict[str, Any]]:
    """The ValidatingAdmissionPolicy and its binding that check what the CRD cannot within its cost limit: the keys
    of the set's label and annotation maps (``api/validation_cel.KEY_MAPS``), and that only a quorum-aware set
    (an annotation) carries rollingUpdate under OnDelete."""
    labels = {"app.kubernetes.io/name": "rollwise"}
    return [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
         "metadata": {"name": POLICY_NAME, "labels": labels},
         "spec": {"failurePolicy": "Fail",
                  "matchConstraints": {"resourceRules": [{
                      "apiGroups": [CR_GROUP], "apiVersions": [CR_VERSION], "operations": ["CREATE", "UPDATE"],
                      "resources": ["statefulsets"]}]},
                  "validations": [*key_validations(), quorum_block_validation()]}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
         "metadata": {"name": POLICY_NAME, "labels": labels},
         "spec": {"policyName": POLICY_NAME, "validationActions": ["Deny"]}},
    ]


def quorum_block_validation() -> dict[str, str]:
    """The policy's half of ``api/validation_cel.strategy_block_rules``: rollingUpdate under OnDelete only on a
    quorum-aware set (``api/strategies.handed_to_quorum``), which a CRD rule cannot tell (it reads no annotation)."""
    strategy, notes = "object.spec.updateStrategy", "object.metadata.annotations"
    return {"expression": f"!has({strategy}.{ROLLING_BLOCK}) || {strategy}.type != '{ON_DELETE}' || "
                          f"(has({notes}) && '{UPDATE_POLICY}' in {notes} && "
                          f"{notes}['{UPDATE_POLICY}'] == '{QUORUM_AWARE_POLICY}')",
            "message": f"spec.updateStrategy.{ROLLING_BLOCK}: only allowed for updateStrategy 'RollingUpdate' (or "
                       f"with OnDelete, for the steps of a set annotated {UPDATE_POLICY}: {QUORUM_AWARE_POLICY})",
            "reason": "Invalid"}
