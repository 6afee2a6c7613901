"""The custom kind on `rollwise up`, driven by the real kubectl, as a cluster with deploy/ applied serves it: its
CRD explains every field, and its CEL rules and the policy beside it refuse what rollwise's validation refuses,
with the rule's message."""

from __future__ import annotations

import pytest
from kubectl_support import Up, statefulset

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(shared=True),
]


def _custom(name: str) -> str:
    return statefulset(name, replicas=1, claims=False).replace("apiVersion: apps/v1",
                                                               "apiVersion: apps.rollwise.dev/v1alpha1")


def test_kubectl_explain_describes_the_rolling_update_block_from_the_crd(up: Up) -> None:
    out = up.kubectl("explain", "rsts.spec.updateStrategy.rollingUpdate").stdout
    assert "Parameters of the RollingUpdate strategy" in out
    for field in ("maxUnavailable", "partition", "podProgressTimeoutSeconds"):
        assert field in out


def test_a_zero_percent_budget_is_refused_with_the_rules_message_at_its_field(up: Up) -> None:
    manifest = _custom("zero").replace("  selector:", "  updateStrategy: {rollingUpdate: {maxUnavailable: '0%'}}\n"
                                                     "  selector:")
    result = up.kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert result.returncode != 0 and result.stdout == ""
    assert "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value" in result.stderr
    assert "must be greater than 0" in result.stderr


def test_a_changed_service_name_is_refused_by_the_transition_rule(up: Up) -> None:
    up.apply(_custom("svc"))
    result = up.kubectl("apply", "-f", "-", stdin=_custom("svc").replace("serviceName: svc", "serviceName: other"),
                        check=False)
    assert result.returncode != 0
    assert "updates to statefulset spec for fields other than 'replicas'" in result.stderr


def test_a_selector_that_misses_the_template_is_refused(up: Up) -> None:
    manifest = _custom("miss").replace("matchLabels: {app: miss}", "matchLabels: {app: other}")
    result = up.kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert result.returncode != 0 and "selector does not match template labels" in result.stderr


def test_a_bad_template_label_key_is_denied_by_the_admission_policy(up: Up) -> None:
    manifest = _custom("keys").replace("labels: {app: keys}", "labels: {app: keys, -bad: x}")
    result = up.kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert result.returncode != 0
    assert "ValidatingAdmissionPolicy 'rollwise-statefulset-keys'" in result.stderr
    assert "spec.template.metadata.labels: keys must be qualified names" in result.stderr
    names = up.kubectl("get", "validatingadmissionpolicies", "-o", "name").stdout
    assert "validatingadmissionpolicy.admissionregistration.k8s.io/rollwise-statefulset-keys" in names
