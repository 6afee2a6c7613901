"""rollwise.api.validation: StatefulSet create and update rules (reference §2) and the seeds' strategy fields."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lifecycle_cases import LIFECYCLE_CASES
from role_probe_cases import ROLE_PROBE_CASES

from rollwise.api.defaults import apply_defaults
from rollwise.api.errors import FieldError
from rollwise.api.features import ENFORCED_ROLLING_UPDATE, MAX_UNAVAILABLE, RECREATE, FeatureGates
from rollwise.api.validation import SPEC_UPDATE_FORBIDDEN, validate_statefulset

GATES = FeatureGates()
DELETE = object()  # marks a path to remove in `changed`


def minimal() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
            },
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}],
        },
    }


def valid() -> dict[str, Any]:
    return apply_defaults(minimal(), gates=GATES)


def changed(obj: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` with each dotted path (``spec.template.spec.containers[0].name``) set, or removed."""
    out = copy.deepcopy(obj)
    for path, value in changes.items():
        tokens = [int(index) if index else name for name, index in re.findall(r"(\w+)|\[(\d+)\]", path)]
        parent = out
        for token in tokens[:-1]:
            parent = parent[token]
        if value is DELETE:
            del parent[tokens[-1]]
        elif isinstance(parent, list) and tokens[-1] == len(parent):
            parent.append(value)
        else:
            parent[tokens[-1]] = value
    return out


def problems(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.path, e.kind) for e in errors]


def test_fully_valid_minimal_set_has_no_errors() -> None:
    assert validate_statefulset(valid(), gates=GATES) == []


SU = "spec.updateStrategy"
RU = f"{SU}.rollingUpdate"
ERU = f"{SU}.enforcedRollingUpdate"
POD = "spec.template.spec"
C0 = f"{POD}.containers[0]"
QA = {"metadata.annotations": {"rollwise.dev/update-policy": "QuorumAware"}}
QA_STEPS = [{"replicas": 1}, {"pause": {}}]
INVALID, REQUIRED, UNSUPPORTED, FORBIDDEN, DUPLICATE = (
    "Invalid value", "Required value", "Unsupported value", "Forbidden", "Duplicate value",
)

# (id, changes to the valid defaulted set, expected [(path, kind, words in the rule)]); [] means accepted.
CREATE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str]]]] = [
    ("rollwise-api-version", {"apiVersion": "apps.rollwise.dev/v1alpha1"}, []),
    ("unknown-api-version", {"apiVersion": "apps/v2"}, [("apiVersion", UNSUPPORTED, '"apps/v1"')]),
    ("wrong-kind", {"kind": "Deployment"}, [("kind", UNSUPPORTED, '"StatefulSet"')]),
    ("name-missing", {"metadata.name": DELETE}, [("metadata.name", REQUIRED, "required")]),
    ("name-uppercase", {"metadata.name": "Web"}, [("metadata.name", INVALID, "RFC 1123 label")]),
    ("name-64-chars", {"metadata.name": "a" * 64}, [("metadata.name", INVALID, "no more than 63 characters")]),
    ("name-63-chars", {"metadata.name": "a" * 63}, []),
    ("name-53-chars-no-warning", {"metadata.name": "a" * 53}, []),
    ("name-with-dot", {"metadata.name": "web.v1"}, [("metadata.name", INVALID, "RFC 1123 label")]),
    ("name-trailing-newline", {"metadata.name": "web\n"}, [("metadata.name", INVALID, "RFC 1123 label")]),
    ("name-not-string", {"metadata.name": 7}, [("metadata.name", INVALID, "must be a string")]),
    ("bad-label-key", {"metadata.labels": {"-bad": "x"}}, [("metadata.labels", INVALID, "name part")]),
    ("zero-replicas", {"spec.replicas": 0}, []),
    ("negative-replicas", {"spec.replicas": -1}, [("spec.replicas", INVALID, "greater than or equal to 0")]),
    ("replicas-word", {"spec.replicas": "three"}, [("spec.replicas", INVALID, "must be an integer")]),
    ("replicas-bool", {"spec.replicas": True}, [("spec.replicas", INVALID, "must be an integer")]),
    ("replicas-float", {"spec.replicas": 1.5}, [("spec.replicas", INVALID, "must be an integer")]),
    ("replicas-beyond-int32", {"spec.replicas": 2**31}, [("spec.replicas", INVALID, "32-bit")]),
    ("negative-min-ready", {"spec.minReadySeconds": -1}, [("spec.minReadySeconds", INVALID, "greater than or equal")]),
    ("ordinals-start", {"spec.ordinals": {"start": 5}}, []),
    ("negative-ordinals-start", {"spec.ordinals": {"start": -1}},
     [("spec.ordinals.start", INVALID, "greater than or equal to 0")]),
    ("ordinals-not-mapping", {"spec.ordinals": 3}, [("spec.ordinals", INVALID, "must be a mapping")]),
    ("parallel", {"spec.podManagementPolicy": "Parallel"}, []),
    ("unknown-pod-management", {"spec.podManagementPolicy": "Random"},
     [("spec.podManagementPolicy", UNSUPPORTED, '"OrderedReady", "Parallel"')]),
    ("empty-pod-management", {"spec.podManagementPolicy": ""}, [("spec.podManagementPolicy", REQUIRED, "")]),
    ("negative-history-limit-allowed", {"spec.revisionHistoryLimit": -1}, []),
    ("history-limit-word", {"spec.revisionHistoryLimit": "ten"},
     [("spec.revisionHistoryLimit", INVALID, "must be an integer")]),
    ("progress-deadline", {"spec.progressDeadlineSeconds": 600}, []),
    ("zero-progress-deadline", {"spec.progressDeadlineSeconds": 0},
     [("spec.progressDeadlineSeconds", INVALID, "must be greater than 0")]),
    ("unknown-strategy", {f"{SU}.type": "BlueGreen"},
     [(f"{SU}.type", UNSUPPORTED, '"RollingUpdate", "OnDelete", "Recreate", "EnforcedRollingUpdate"')]),
    ("empty-strategy-type", {f"{SU}.type": ""}, [(f"{SU}.type", REQUIRED, "")]),
    ("strategy-not-mapping", {SU: "RollingUpdate"}, [(SU, INVALID, "must be a mapping")]),
    ("on-delete", {SU: {"type": "OnDelete"}}, []),
    ("recreate", {SU: {"type": "Recreate"}}, []),
    ("enforced", {SU: {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 0}}}, []),
    ("blockless-rolling-update", {SU: {"type": "RollingUpdate"}}, []),
    ("on-delete-with-rolling-update", {f"{SU}.type": "OnDelete"},
     [(RU, FORBIDDEN, "only allowed for updateStrategy 'RollingUpdate'")]),
    # A quorum-aware set (OnDelete and the annotation) keeps its canary steps in rollingUpdate, and only them.
    ("quorum-aware-with-steps", {**QA, SU: {"type": "OnDelete", "rollingUpdate": {"steps": QA_STEPS}}}, []),
    ("quorum-aware-with-steps-and-crd-defaults", {**QA, SU: {"type": "OnDelete", "rollingUpdate": {
        "steps": QA_STEPS, "partition": 0, "maxUnavailable": 1, "podUpdatePolicy": "ReCreate"}}}, []),
    ("quorum-aware-with-a-partition", {**QA, SU: {"type": "OnDelete", "rollingUpdate": {
        "steps": QA_STEPS, "partition": 2}}}, [(f"{RU}.partition", FORBIDDEN, "for its steps alone")]),
    ("quorum-aware-with-a-budget", {**QA, SU: {"type": "OnDelete", "rollingUpdate": {"maxUnavailable": 2}}},
     [(f"{RU}.maxUnavailable", FORBIDDEN, "rollwise.dev/max-unavailable-members")]),
    ("quorum-aware-with-a-bad-step", {**QA, SU: {"type": "OnDelete", "rollingUpdate": {"steps": [{"replicas": -1}]}}},
     [(f"{RU}.steps[0].replicas", INVALID, "at least 0")]),
    ("on-delete-with-steps-not-quorum-aware", {SU: {"type": "OnDelete", "rollingUpdate": {"steps": QA_STEPS}}},
     [(RU, FORBIDDEN, "only allowed for updateStrategy 'RollingUpdate'")]),
    ("recreate-with-rolling-update", {f"{SU}.type": "Recreate"},
     [(RU, FORBIDDEN, "only allowed for updateStrategy 'RollingUpdate'")]),
    ("rolling-update-with-enforced-block", {f"{SU}.enforcedRollingUpdate": {"partition": 0}},
     [(ERU, FORBIDDEN, "only allowed for updateStrategy 'EnforcedRollingUpdate'")]),
    ("rolling-update-block-not-mapping", {RU: 1}, [(RU, INVALID, "must be a mapping")]),
    ("partition", {f"{RU}.partition": 3}, []),
    ("negative-partition", {f"{RU}.partition": -1}, [(f"{RU}.partition", INVALID, "greater than or equal to 0")]),
    ("max-unavailable-1", {f"{RU}.maxUnavailable": 1}, []),
    ("max-unavailable-above-replicas", {f"{RU}.maxUnavailable": 7}, []),
    ("max-unavailable-50-percent", {f"{RU}.maxUnavailable": "50%"}, []),
    ("max-unavailable-100-percent", {f"{RU}.maxUnavailable": "100%"}, []),
    ("max-unavailable-0", {f"{RU}.maxUnavailable": 0}, [(f"{RU}.maxUnavailable", INVALID, "must be greater than 0")]),
    ("max-unavailable-negative", {f"{RU}.maxUnavailable": -1},
     [(f"{RU}.maxUnavailable", INVALID, "must be greater than 0")]),
    ("max-unavailable-0-percent", {f"{RU}.maxUnavailable": "0%"},
     [(f"{RU}.maxUnavailable", INVALID, "must be greater than 0")]),
    ("max-unavailable-101-percent", {f"{RU}.maxUnavailable": "101%"},
     [(f"{RU}.maxUnavailable", INVALID, "not be greater than 100%")]),
    ("max-unavailable-word", {f"{RU}.maxUnavailable": "abc"}, [(f"{RU}.maxUnavailable", INVALID, "percentage")]),
    ("max-unavailable-digits-only", {f"{RU}.maxUnavailable": "5"}, [(f"{RU}.maxUnavailable", INVALID, "percentage")]),
    ("max-unavailable-bool", {f"{RU}.maxUnavailable": True}, [(f"{RU}.maxUnavailable", INVALID, "an integer or")]),
    ("enforced-max-unavailable-0", {SU: {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {
        "partition": 0, "maxUnavailable": 0}}}, [(f"{ERU}.maxUnavailable", INVALID, "must be greater than 0")]),
    ("pod-progress-timeout", {f"{RU}.podProgressTimeoutSeconds": 600}, []),
    ("zero-pod-progress-timeout", {f"{RU}.podProgressTimeoutSeconds": 0},
     [(f"{RU}.podProgressTimeoutSeconds", INVALID, "must be greater than 0")]),
    ("enforced-pod-progress-timeout-word", {SU: {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {
        "podProgressTimeoutSeconds": "1m"}}}, [(f"{ERU}.podProgressTimeoutSeconds", INVALID, "an integer")]),
    ("retention-delete", {"spec.persistentVolumeClaimRetentionPolicy.whenScaled": "Delete"}, []),
    ("retention-unknown", {"spec.persistentVolumeClaimRetentionPolicy.whenDeleted": "Keep"},
     [("spec.persistentVolumeClaimRetentionPolicy.whenDeleted", UNSUPPORTED, '"Retain", "Delete"')]),
    ("no-service-name", {"spec.serviceName": DELETE}, []),
    ("empty-service-name", {"spec.serviceName": ""}, []),
    ("invalid-service-name", {"spec.serviceName": "Web_Svc"}, [("spec.serviceName", INVALID, "RFC 1123 label")]),
    ("selector-missing", {"spec.selector": DELETE}, [("spec.selector", REQUIRED, "")]),
    ("selector-empty", {"spec.selector": {}}, [("spec.selector", INVALID, "empty selector is invalid")]),
    ("selector-bad-value", {"spec.selector.matchLabels.app": "not ok!"},
     [("spec.selector.matchLabels", INVALID, "valid label")]),
    ("selector-mismatch", {"spec.selector.matchLabels.app": "db"},
     [("spec.template.metadata.labels", INVALID, "selector does not match template labels")]),
    ("selector-expression-matches", {"spec.selector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["web", "api"]}]}}, []),
    ("selector-expression-mismatch", {"spec.selector": {"matchExpressions": [
        {"key": "app", "operator": "NotIn", "values": ["web"]}]}},
     [("spec.template.metadata.labels", INVALID, "selector does not match")]),
    ("selector-unknown-operator", {"spec.selector": {"matchExpressions": [{"key": "app", "operator": "Like"}]}},
     [("spec.selector.matchExpressions[0].operator", UNSUPPORTED, '"In"')]),
    ("selector-in-without-values", {"spec.selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
     [("spec.selector.matchExpressions[0].values", REQUIRED, "'In' or 'NotIn'")]),
    ("selector-exists-with-values", {"spec.selector": {"matchExpressions": [
        {"key": "app", "operator": "Exists", "values": ["web"]}]}},
     [("spec.selector.matchExpressions[0].values", FORBIDDEN, "'Exists'")]),
    ("template-labels-missing", {"spec.template.metadata": DELETE},
     [("spec.template.metadata.labels", INVALID, "selector does not match")]),
    ("restart-policy-never", {f"{POD}.restartPolicy": "Never"},
     [(f"{POD}.restartPolicy", UNSUPPORTED, '"Always"')]),
    ("active-deadline", {f"{POD}.activeDeadlineSeconds": 30}, [(f"{POD}.activeDeadlineSeconds", FORBIDDEN, "")]),
    ("no-containers", {f"{POD}.containers": []}, [(f"{POD}.containers", REQUIRED, "")]),
    ("containers-not-list", {f"{POD}.containers": {"name": "app"}}, [(f"{POD}.containers", INVALID, "a list")]),
    ("container-name-missing", {f"{POD}.containers[0].name": DELETE}, [(f"{POD}.containers[0].name", REQUIRED, "")]),
    ("container-name-uppercase", {f"{POD}.containers[0].name": "App"},
     [(f"{POD}.containers[0].name", INVALID, "RFC 1123 label")]),
    ("container-image-empty", {f"{POD}.containers[0].image": ""}, [(f"{POD}.containers[0].image", REQUIRED, "")]),
    ("container-image-not-string", {f"{POD}.containers[0].image": 3},
     [(f"{POD}.containers[0].image", INVALID, "a string")]),
    ("duplicate-container-names", {f"{POD}.containers[1]": {"name": "app", "image": "sidecar:1"}},
     [(f"{POD}.containers[1].name", DUPLICATE, "unique")]),
    ("init-container-shares-name", {f"{POD}.initContainers": [{"name": "app", "image": "init:1"}]},
     [(f"{POD}.containers[0].name", DUPLICATE, "unique")]),
    # What kube-apiserver refuses on a Pod (api/validation_containers.py), refused where the template is written.
    ("pull-policy-typo", {f"{C0}.imagePullPolicy": "Alwayz"},
     [(f"{C0}.imagePullPolicy", UNSUPPORTED, '"Always", "IfNotPresent", "Never"')]),
    ("pull-policy-empty", {f"{C0}.imagePullPolicy": ""}, [(f"{C0}.imagePullPolicy", REQUIRED, "")]),
    ("pull-policy-never", {f"{C0}.imagePullPolicy": "Never"}, []),
    ("init-pull-policy-typo", {f"{POD}.initContainers": [{"name": "init", "image": "i:1", "imagePullPolicy": "No"}]},
     [(f"{POD}.initContainers[0].imagePullPolicy", UNSUPPORTED, '"Always"')]),
    ("termination-message-policy-unknown", {f"{C0}.terminationMessagePolicy": "Logs"},
     [(f"{C0}.terminationMessagePolicy", UNSUPPORTED, '"File", "FallbackToLogsOnError"')]),
    ("ports-ok", {f"{C0}.ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"},
                                  {"containerPort": 9090, "hostPort": 0, "name": "metrics"}]}, []),
    ("port-number-missing", {f"{C0}.ports": [{"name": "http"}]}, [(f"{C0}.ports[0].containerPort", REQUIRED, "")]),
    ("port-number-too-big", {f"{C0}.ports": [{"containerPort": 70000}]},
     [(f"{C0}.ports[0].containerPort", INVALID, "between 1 and 65535")]),
    ("host-port-negative", {f"{C0}.ports": [{"containerPort": 80, "hostPort": -1}]},
     [(f"{C0}.ports[0].hostPort", INVALID, "between 0 and 65535")]),
    ("port-protocol-unknown", {f"{C0}.ports": [{"containerPort": 80, "protocol": "HTTP"}]},
     [(f"{C0}.ports[0].protocol", UNSUPPORTED, '"TCP", "UDP", "SCTP"')]),
    ("port-name-too-long", {f"{C0}.ports": [{"containerPort": 80, "name": "a-very-long-port-name"}]},
     [(f"{C0}.ports[0].name", INVALID, "IANA_SVC_NAME")]),
    ("port-name-no-letter", {f"{C0}.ports": [{"containerPort": 80, "name": "8080"}]},
     [(f"{C0}.ports[0].name", INVALID, "IANA_SVC_NAME")]),
    ("port-name-double-dash", {f"{C0}.ports": [{"containerPort": 80, "name": "a--b"}]},
     [(f"{C0}.ports[0].name", INVALID, "IANA_SVC_NAME")]),
    ("port-names-duplicate", {f"{C0}.ports": [{"containerPort": 80, "name": "http"},
                                              {"containerPort": 81, "name": "http"}]},
     [(f"{C0}.ports[1].name", DUPLICATE, "unique")]),
    ("env-ok", {f"{C0}.env": [{"name": "MODE", "value": "fast"}, {"name": "my.var-1", "value": ""},
                              {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}, []),
    ("env-name-missing", {f"{C0}.env": [{"value": "x"}]}, [(f"{C0}.env[0].name", REQUIRED, "")]),
    ("env-name-with-equals", {f"{C0}.env": [{"name": "A=B", "value": "x"}]},
     [(f"{C0}.env[0].name", INVALID, "other than '='")]),
    ("env-value-and-value-from", {f"{C0}.env": [{"name": "A", "value": "x", "valueFrom": {
        "fieldRef": {"fieldPath": "metadata.name"}}}]},
     [(f"{C0}.env[0].valueFrom", INVALID, "may not be specified when `value` is not empty")]),
    ("request-above-limit", {f"{C0}.resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "500m"}}},
     [(f"{C0}.resources.requests[cpu]", INVALID, "less than or equal to cpu limit of 500m")]),
    ("request-at-limit", {f"{C0}.resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1024Mi"}}}, []),
    ("probe-ok", {f"{C0}.readinessProbe": {"httpGet": {"port": "http", "path": "/"}, "periodSeconds": 5}}, []),
    ("probe-no-handler", {f"{C0}.readinessProbe": {"periodSeconds": 5}},
     [(f"{C0}.readinessProbe", REQUIRED, "handler")]),
    ("probe-two-handlers", {f"{C0}.livenessProbe": {"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}}},
     [(f"{C0}.livenessProbe.tcpSocket", FORBIDDEN, "more than 1 handler")]),
    ("probe-negative-period", {f"{C0}.readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": -1}},
     [(f"{C0}.readinessProbe.periodSeconds", INVALID, "greater than or equal to 0")]),
    ("liveness-success-threshold", {f"{C0}.livenessProbe": {"tcpSocket": {"port": 80}, "successThreshold": 2}},
     [(f"{C0}.livenessProbe.successThreshold", INVALID, "must be 1")]),
    ("readiness-success-threshold", {f"{C0}.readinessProbe": {"tcpSocket": {"port": 80}, "successThreshold": 2}},
     []),
    ("probe-port-zero", {f"{C0}.startupProbe": {"httpGet": {"port": 0}}},
     [(f"{C0}.startupProbe.httpGet.port", INVALID, "between 1 and 65535")]),
    ("probe-port-digits-string", {f"{C0}.startupProbe": {"tcpSocket": {"port": "80"}}},
     [(f"{C0}.startupProbe.tcpSocket.port", INVALID, "IANA_SVC_NAME")]),
    ("probe-scheme-unknown", {f"{C0}.readinessProbe": {"httpGet": {"port": 80, "scheme": "FTP"}}},
     [(f"{C0}.readinessProbe.httpGet.scheme", UNSUPPORTED, '"HTTP", "HTTPS"')]),
    ("dns-policy-unknown", {f"{POD}.dnsPolicy": "Cluster"},
     [(f"{POD}.dnsPolicy", UNSUPPORTED, '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"')]),
    ("claim-name-missing", {"spec.volumeClaimTemplates[0].metadata": DELETE},
     [("spec.volumeClaimTemplates[0].metadata.name", REQUIRED, "")]),
    ("claim-name-uppercase", {"spec.volumeClaimTemplates[0].metadata.name": "Data"},
     [("spec.volumeClaimTemplates[0].metadata.name", INVALID, "RFC 1123 label")]),
    ("duplicate-claim-names", {"spec.volumeClaimTemplates[1]": {"metadata": {"name": "data"}}},
     [("spec.volumeClaimTemplates[1].metadata.name", DUPLICATE, "unique")]),
    ("claims-not-list", {"spec.volumeClaimTemplates": "data"},
     [("spec.volumeClaimTemplates", INVALID, "must be a list")]),
    ("claim-update-policy-unknown", {"spec.volumeClaimUpdatePolicy": "Sometimes"},
     [("spec.volumeClaimUpdatePolicy", UNSUPPORTED, '"OnClaimDelete", "InPlace"')]),
    ("spec-not-mapping", {"spec": ["replicas"]}, [("spec", INVALID, "must be a mapping")]),
    ("spec-missing", {"spec": DELETE}, [("spec", REQUIRED, "")]),
    ("template-not-mapping", {"spec.template": "pod"}, [("spec.template", INVALID, "must be a mapping")]),
    ("pod-spec-not-mapping", {f"{POD}": 3}, [(POD, INVALID, "must be a mapping")]),
    ("metadata-not-mapping", {"metadata": "web"}, [("metadata", INVALID, "must be a mapping")]),
]
CREATE_CASES += LIFECYCLE_CASES  # spec.lifecycle.preDelete (lifecycle_cases.py)
CREATE_CASES += ROLE_PROBE_CASES  # spec.roleProbe (role_probe_cases.py)


@pytest.mark.parametrize(("changes", "expected"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_create_rules(changes: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    errors = validate_statefulset(changed(valid(), changes), gates=GATES)
    assert problems(errors) == [(path, kind) for path, kind, _ in expected]
    for error, (_, _, words) in zip(errors, expected, strict=True):
        assert words in error.rule
        assert isinstance(str(error), str)


@pytest.mark.parametrize(
    ("changes", "rendered"),
    [
        ({f"{RU}.maxUnavailable": 0}, f"{RU}.maxUnavailable: Invalid value: 0: must be greater than 0"),
        ({f"{RU}.maxUnavailable": "101%"},
         f'{RU}.maxUnavailable: Invalid value: "101%": must not be greater than 100%'),
        ({f"{POD}.restartPolicy": "Never"},
         f'{POD}.restartPolicy: Unsupported value: "Never": supported values: "Always"'),
        ({"spec.selector.matchLabels.app": "db"},
         'spec.template.metadata.labels: Invalid value: {"app":"web"}: selector does not match template labels'),
        ({f"{SU}.type": "OnDelete"}, f"{RU}: Forbidden: only allowed for updateStrategy 'RollingUpdate'"),
        ({"spec.replicas": -1}, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        ({"spec.selector": {}}, "spec.selector: Invalid value: {}: empty selector is invalid for statefulset"),
    ],
    ids=["max-unavailable-0", "max-unavailable-101", "restart-never", "selector-mismatch", "on-delete-block",
         "negative-replicas", "empty-selector"],
)
def test_errors_render_in_kubernetes_wording(changes: dict[str, Any], rendered: str) -> None:
    assert [str(e) for e in validate_statefulset(changed(valid(), changes), gates=GATES)] == [rendered]


def test_every_problem_is_reported_at_once() -> None:
    obj = changed(valid(), {"metadata.name": "Web", "spec.replicas": -1, f"{POD}.restartPolicy": "Never",
                            f"{RU}.maxUnavailable": "abc", "spec.selector.matchLabels.app": "db"})
    assert [path for path, _ in problems(validate_statefulset(obj, gates=GATES))] == [
        "metadata.name", "spec.replicas", f"{RU}.maxUnavailable", "spec.template.metadata.labels",
        f"{POD}.restartPolicy",
    ]


GATE_CASES = [
    (RECREATE, {SU: {"type": "Recreate"}}, f"{SU}.type", UNSUPPORTED, "StatefulSetRecreateStrategy"),
    (ENFORCED_ROLLING_UPDATE, {SU: {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 0}}},
     f"{SU}.type", UNSUPPORTED, "EnforcedRollingUpdateInStatefulSet"),
    (MAX_UNAVAILABLE, {f"{RU}.maxUnavailable": 2}, f"{RU}.maxUnavailable", FORBIDDEN, "MaxUnavailableStatefulSet"),
    (MAX_UNAVAILABLE, {SU: {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"maxUnavailable": "50%"}}},
     f"{ERU}.maxUnavailable", FORBIDDEN, "MaxUnavailableStatefulSet"),
]


@pytest.mark.parametrize(("gate", "changes", "path", "kind", "words"), GATE_CASES,
                         ids=["recreate", "enforced", "max-unavailable", "enforced-max-unavailable"])
def test_gated_fields_are_rejected_with_the_gate_named_only_while_it_is_off(
    gate: str, changes: dict[str, Any], path: str, kind: str, words: str
) -> None:
    obj = changed(valid(), changes)
    assert validate_statefulset(obj, gates=GATES) == []
    errors = validate_statefulset(obj, gates=GATES.with_overrides({gate: False}))
    assert problems(errors) == [(path, kind)]
    assert words in errors[0].rule


def test_gated_strategy_error_lists_only_the_types_still_supported() -> None:
    gates = GATES.with_overrides({RECREATE: False})
    [error] = validate_statefulset(changed(valid(), {SU: {"type": "Recreate"}}), gates=gates)
    assert error.rule.endswith('supported values: "RollingUpdate", "OnDelete", "EnforcedRollingUpdate"')


# ---- update -------------------------------------------------------------------------------------------------------

MUTABLE_CHANGES = [
    ("replicas", {"spec.replicas": 5}),
    ("ordinals", {"spec.ordinals": {"start": 3}}),
    ("template", {f"{POD}.containers[0].image": "nginx:1.26"}),
    ("update-strategy", {SU: {"type": "OnDelete"}}),
    ("revision-history-limit", {"spec.revisionHistoryLimit": 2}),
    ("retention-policy", {"spec.persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete",
                                                                        "whenScaled": "Delete"}}),
    ("min-ready-seconds", {"spec.minReadySeconds": 10}),
    ("progress-deadline-seconds", {"spec.progressDeadlineSeconds": 300}),
    ("pre-delete-hook", {"spec.lifecycle": {"preDelete": {"labelsHandler": {"drain": "pending"}}}}),
    ("role-probe", {"spec.roleProbe": {"port": 8008, "path": "/leader", "leader": {"statusCode": 200}}}),
    # KEP-4650: claim templates change (new claims take the change; InPlace expands existing ones).
    ("claim-template-access-modes", {"spec.volumeClaimTemplates[0].spec.accessModes": ["ReadWriteMany"]}),
    ("claim-template-added", {"spec.volumeClaimTemplates[1]": {"metadata": {"name": "logs"}}}),
    ("claim-template-storage-set", {"spec.volumeClaimTemplates[0].spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}}),
    ("claim-update-policy", {"spec.volumeClaimUpdatePolicy": "InPlace"}),
]


@pytest.mark.parametrize("changes", [c[1] for c in MUTABLE_CHANGES], ids=[c[0] for c in MUTABLE_CHANGES])
def test_mutable_spec_fields_may_change_on_update(changes: dict[str, Any]) -> None:
    assert validate_statefulset(changed(valid(), changes), old=valid(), gates=GATES) == []


IMMUTABLE_CHANGES = [
    ("selector", {"spec.selector": {"matchLabels": {"app": "web"},
                                    "matchExpressions": [{"key": "app", "operator": "Exists"}]}}),
    ("service-name", {"spec.serviceName": "web-headless"}),
    ("service-name-removed", {"spec.serviceName": DELETE}),
    ("pod-management-policy", {"spec.podManagementPolicy": "Parallel"}),
    ("unknown-field", {"spec.hostUsers": False}),
    ("several-at-once", {"spec.serviceName": "other", "spec.podManagementPolicy": "Parallel"}),
]


@pytest.mark.parametrize("changes", [c[1] for c in IMMUTABLE_CHANGES], ids=[c[0] for c in IMMUTABLE_CHANGES])
def test_other_spec_fields_are_forbidden_to_change_with_one_upstream_error(changes: dict[str, Any]) -> None:
    errors = validate_statefulset(changed(valid(), changes), old=valid(), gates=GATES)
    assert [str(e) for e in errors] == [f"spec: Forbidden: {SPEC_UPDATE_FORBIDDEN}"]
    assert "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit'," in SPEC_UPDATE_FORBIDDEN


@pytest.mark.parametrize(("field", "value"), [("name", "web2"), ("namespace", "prod")], ids=["name", "namespace"])
def test_object_identity_is_immutable_on_update(field: str, value: str) -> None:
    errors = validate_statefulset(changed(valid(), {f"metadata.{field}": value}), old=valid(), gates=GATES)
    assert [str(e) for e in errors] == [f'metadata.{field}: Invalid value: "{value}": field is immutable']


def test_update_revalidates_the_new_object() -> None:
    errors = validate_statefulset(changed(valid(), {"spec.replicas": -1}), old=valid(), gates=GATES)
    assert problems(errors) == [("spec.replicas", INVALID)]


def test_invalid_service_name_is_rejected_on_create_but_tolerated_on_update() -> None:
    legacy = changed(valid(), {"spec.serviceName": "Legacy_Name"})
    assert problems(validate_statefulset(legacy, gates=GATES)) == [("spec.serviceName", INVALID)]
    assert validate_statefulset(changed(legacy, {"spec.replicas": 4}), old=legacy, gates=GATES) == []


@pytest.mark.parametrize(
    ("gate", "strategy"),
    [(RECREATE, {"type": "Recreate"}),
     (ENFORCED_ROLLING_UPDATE, {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 0}}),
     (MAX_UNAVAILABLE, {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 2}})],
    ids=["recreate", "enforced", "max-unavailable"],
)
def test_gated_value_already_stored_survives_an_update_after_the_gate_is_turned_off(
    gate: str, strategy: dict[str, Any]
) -> None:
    stored = changed(valid(), {SU: strategy})
    gates = GATES.with_overrides({gate: False})
    assert validate_statefulset(changed(stored, {"spec.replicas": 2}), old=stored, gates=gates) == []
    # ...but a set that did not use it cannot switch to it.
    plain = changed(valid(), {f"{RU}.maxUnavailable": DELETE})
    assert validate_statefulset(stored, old=plain, gates=gates) != []


# ---- type errors never raise --------------------------------------------------------------------------------------

_leaf = st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "web", "Always", "OnDelete", "50%"])
_value = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["metadata", "name", "spec", "replicas", "selector", "matchLabels", "matchExpressions",
                         "template", "containers", "image", "updateStrategy", "type", "rollingUpdate",
                         "maxUnavailable", "volumeClaimTemplates", "ordinals", "labels", "key", "operator"]),
        inner, max_size=4),
    max_leaves=25,
)


@given(obj=_value, old=st.none() | _value)
def test_arbitrary_shapes_yield_field_errors_and_never_raise(obj: Any, old: Any) -> None:
    errors = validate_statefulset(obj, old=old, gates=GATES)
    assert all(isinstance(e, FieldError) and str(e) for e in errors)
    if not isinstance(obj, dict):
        assert errors


@given(spec=st.dictionaries(st.sampled_from(["replicas", "selector", "template", "updateStrategy", "ordinals",
                                             "volumeClaimTemplates", "persistentVolumeClaimRetentionPolicy"]),
                            _value, max_size=4))
def test_defaulted_arbitrary_specs_yield_field_errors_and_never_raise(spec: dict[str, Any]) -> None:
    obj = apply_defaults({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "x"}, "spec": spec},
                         gates=GATES)
    assert all(isinstance(e, FieldError) for e in validate_statefulset(obj, gates=GATES))
