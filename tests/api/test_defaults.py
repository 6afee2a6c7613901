"""rollwise.api.defaults: upstream StatefulSet defaulting (reference §1.1) and the seeds' strategy extensions."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rollwise.api.defaults import apply_defaults, default_image_pull_policy
from rollwise.api.features import MAX_UNAVAILABLE, FeatureGates

GATES_ON = FeatureGates()
GATES_OFF = FeatureGates().with_overrides({MAX_UNAVAILABLE: False})


def minimal(**spec: Any) -> dict[str, Any]:
    """The smallest StatefulSet a user would write, with ``spec`` keys added or replaced."""
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
            },
            **spec,
        },
    }


def strategy_of(obj: dict[str, Any]) -> Any:
    return obj["spec"]["updateStrategy"]


def test_minimal_set_gets_every_upstream_default() -> None:
    out = apply_defaults(minimal(), gates=GATES_ON)
    assert out == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "podManagementPolicy": "OrderedReady",
            "revisionHistoryLimit": 10,
            "minReadySeconds": 0,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "schedulerName": "default-scheduler",
                    "securityContext": {},
                    "terminationGracePeriodSeconds": 30,
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1.25",
                            "imagePullPolicy": "IfNotPresent",
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File",
                            "resources": {},
                        }
                    ],
                },
            },
        },
    }


STRATEGY_CASES = [
    # (given updateStrategy or None, gates, expected updateStrategy)
    (None, GATES_ON, {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}}),
    (None, GATES_OFF, {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
    ({"type": ""}, GATES_ON, {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}}),
    ({"type": "RollingUpdate"}, GATES_ON, {"type": "RollingUpdate"}),
    ({"type": "", "rollingUpdate": {"partition": 2}}, GATES_ON,
     {"type": "RollingUpdate", "rollingUpdate": {"partition": 2, "maxUnavailable": 1}}),
    ({"type": "RollingUpdate", "rollingUpdate": {}}, GATES_ON,
     {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}}),
    ({"type": "RollingUpdate", "rollingUpdate": {"partition": 3, "maxUnavailable": "50%"}}, GATES_ON,
     {"type": "RollingUpdate", "rollingUpdate": {"partition": 3, "maxUnavailable": "50%"}}),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}, GATES_OFF,
     {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
    ({"type": "OnDelete"}, GATES_ON, {"type": "OnDelete"}),
    ({"type": "Recreate"}, GATES_ON, {"type": "Recreate"}),
    ({"type": "EnforcedRollingUpdate"}, GATES_ON,
     {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 0, "maxUnavailable": 1}}),
    ({"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"maxUnavailable": 2, "podProgressTimeoutSeconds": 60}},
     GATES_ON,
     {"type": "EnforcedRollingUpdate",
      "enforcedRollingUpdate": {"partition": 0, "maxUnavailable": 2, "podProgressTimeoutSeconds": 60}}),
    ({"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"maxUnavailable": 2}}, GATES_OFF,
     {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 0}}),
    ({"type": "OnDelete", "rollingUpdate": {"maxUnavailable": 2}}, GATES_OFF,
     {"type": "OnDelete", "rollingUpdate": {}}),
    ({"type": "OnDelete", "rollingUpdate": {"partition": 1}}, GATES_ON,
     {"type": "OnDelete", "rollingUpdate": {"partition": 1}}),
    ({"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "podProgressTimeoutSeconds": 600}}, GATES_ON,
     {"type": "RollingUpdate",
      "rollingUpdate": {"partition": 0, "maxUnavailable": 1, "podProgressTimeoutSeconds": 600}}),
]


@pytest.mark.parametrize(
    ("given_strategy", "gates", "expected"),
    STRATEGY_CASES,
    ids=[
        "absent-gate-on",
        "absent-gate-off-no-max-unavailable",
        "empty-type-gets-rolling-update-block",
        "explicit-rolling-update-without-block-stays-blockless",
        "empty-type-keeps-a-given-block",
        "empty-block-gets-partition-and-max-unavailable",
        "explicit-values-kept",
        "gate-off-drops-explicit-max-unavailable",
        "on-delete-gets-no-block",
        "recreate-gets-no-block",
        "enforced-gets-its-block",
        "enforced-keeps-explicit-values",
        "enforced-gate-off-drops-max-unavailable",
        "gate-off-drops-max-unavailable-under-any-type",
        "block-under-wrong-type-is-left-for-validation",
        "pod-progress-timeout-has-no-default",
    ],
)
def test_update_strategy_defaulting(given_strategy: Any, gates: FeatureGates, expected: Any) -> None:
    obj = minimal() if given_strategy is None else minimal(updateStrategy=given_strategy)
    assert strategy_of(apply_defaults(obj, gates=gates)) == expected


@pytest.mark.parametrize(
    ("field", "value"),
    [("replicas", 0), ("minReadySeconds", 5), ("revisionHistoryLimit", -1), ("podManagementPolicy", "Parallel"),
     ("progressDeadlineSeconds", 600), ("serviceName", "web")],
    ids=["zero-replicas", "min-ready", "negative-history", "parallel", "progress-deadline", "service-name"],
)
def test_explicit_spec_values_survive_defaulting(field: str, value: Any) -> None:
    assert apply_defaults(minimal(**{field: value}), gates=GATES_ON)["spec"][field] == value


def test_progress_deadline_has_no_default() -> None:
    assert "progressDeadlineSeconds" not in apply_defaults(minimal(), gates=GATES_ON)["spec"]


def test_null_pointer_fields_count_as_absent() -> None:
    out = apply_defaults(minimal(replicas=None, revisionHistoryLimit=None, updateStrategy=None), gates=GATES_ON)
    assert out["spec"]["replicas"] == 1
    assert out["spec"]["revisionHistoryLimit"] == 10
    assert strategy_of(out)["type"] == "RollingUpdate"


def test_partial_retention_policy_fills_only_the_missing_field() -> None:
    out = apply_defaults(minimal(persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete"}), gates=GATES_ON)
    assert out["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Delete"}


def test_explicit_namespace_is_kept() -> None:
    obj = minimal()
    obj["metadata"]["namespace"] = "prod"
    assert apply_defaults(obj, gates=GATES_ON)["metadata"]["namespace"] == "prod"


def test_rollwise_crd_objects_are_defaulted_the_same_way() -> None:
    apps = apply_defaults(minimal(), gates=GATES_ON)
    crd = minimal()
    crd["apiVersion"] = "apps.rollwise.dev/v1alpha1"
    out = apply_defaults(crd, gates=GATES_ON)
    assert out["apiVersion"] == "apps.rollwise.dev/v1alpha1"
    assert out["spec"] == apps["spec"]


def test_claim_templates_get_type_meta_and_volume_mode_but_no_status() -> None:
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    out = apply_defaults(minimal(volumeClaimTemplates=[claim, {"metadata": {"name": "logs"}}]), gates=GATES_ON)
    first, second = out["spec"]["volumeClaimTemplates"]
    assert first == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem"},
    }
    assert second["spec"] == {"volumeMode": "Filesystem"}
    assert "status" not in first


def test_explicit_pod_template_values_survive_defaulting() -> None:
    obj = minimal()
    pod_spec = obj["spec"]["template"]["spec"]
    pod_spec.update(dnsPolicy="None", terminationGracePeriodSeconds=0, restartPolicy="Never")
    pod_spec["containers"][0].update(imagePullPolicy="Never", resources={"limits": {"cpu": "1"}})
    out = apply_defaults(obj, gates=GATES_ON)["spec"]["template"]["spec"]
    assert (out["dnsPolicy"], out["terminationGracePeriodSeconds"], out["restartPolicy"]) == ("None", 0, "Never")
    assert out["containers"][0]["imagePullPolicy"] == "Never"
    assert out["containers"][0]["resources"] == {"limits": {"cpu": "1"}}


def test_init_containers_ports_and_probes_get_upstream_defaults() -> None:
    obj = minimal()
    pod_spec = obj["spec"]["template"]["spec"]
    pod_spec["initContainers"] = [{"name": "init", "image": "busybox"}]
    pod_spec["containers"][0]["ports"] = [{"containerPort": 80, "name": "web"}]
    pod_spec["containers"][0]["readinessProbe"] = {"httpGet": {"port": 80}, "periodSeconds": 2}
    out = apply_defaults(obj, gates=GATES_ON)["spec"]["template"]["spec"]
    assert out["initContainers"][0]["imagePullPolicy"] == "Always"
    assert out["initContainers"][0]["terminationMessagePolicy"] == "File"
    assert out["containers"][0]["ports"] == [{"containerPort": 80, "name": "web", "protocol": "TCP"}]
    assert out["containers"][0]["readinessProbe"] == {
        "httpGet": {"port": 80}, "periodSeconds": 2, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3,
    }


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry.local:5000/team/app", "Always"),
        ("registry.local:5000/team/app:v2", "IfNotPresent"),
        ("registry.local:5000/team/app:latest", "Always"),
        ("app@sha256:" + "a" * 64, "IfNotPresent"),
        ("app:latest@sha256:" + "a" * 64, "Always"),
    ],
    ids=["no-tag", "latest", "tagged", "registry-port-no-tag", "registry-port-tagged", "registry-port-latest",
         "digest-only", "latest-with-digest"],
)
def test_image_pull_policy_is_always_only_for_latest_or_untagged(image: str, policy: str) -> None:
    assert default_image_pull_policy(image) == policy
    obj = minimal()
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = image
    assert apply_defaults(obj, gates=GATES_ON)["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == policy


IDEMPOTENCE_CASES = [
    minimal(),
    minimal(updateStrategy={"type": "RollingUpdate"}),
    minimal(updateStrategy={"type": "EnforcedRollingUpdate"}),
    minimal(updateStrategy={"type": "OnDelete", "rollingUpdate": {"maxUnavailable": 3}}),
    minimal(volumeClaimTemplates=[{"metadata": {"name": "data"}}], replicas=0),
    {"kind": "StatefulSet"},
    {"spec": ["not", "a", "mapping"], "metadata": "nope"},
]


@pytest.mark.parametrize("gates", [GATES_ON, GATES_OFF], ids=["gate-on", "gate-off"])
@pytest.mark.parametrize(
    "obj", IDEMPOTENCE_CASES,
    ids=["minimal", "blockless-rolling", "enforced", "on-delete-with-block", "claims", "bare", "malformed"],
)
def test_defaulting_is_idempotent_and_leaves_its_input_untouched(obj: dict[str, Any], gates: FeatureGates) -> None:
    before = copy.deepcopy(obj)
    once = apply_defaults(obj, gates=gates)
    assert obj == before
    assert apply_defaults(once, gates=gates) == once


def test_defaulting_returns_a_copy_that_shares_nothing_with_the_input() -> None:
    obj = minimal()
    out = apply_defaults(obj, gates=GATES_ON)
    out["spec"]["template"]["spec"]["containers"][0]["image"] = "changed"
    out["spec"]["selector"]["matchLabels"]["app"] = "changed"
    assert obj == minimal()


@pytest.mark.parametrize(
    "spec",
    [
        {"updateStrategy": "RollingUpdate"},
        {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": 3}},
        {"updateStrategy": {"type": ["x"]}},
        {"template": "pod"},
        {"template": {"spec": {"containers": {"name": "app"}}}},
        {"template": {"spec": {"containers": ["app", {"image": 3, "ports": "80"}]}}},
        {"persistentVolumeClaimRetentionPolicy": "Retain"},
        {"volumeClaimTemplates": [None, "data", {"spec": "x"}]},
    ],
    ids=["strategy-string", "block-int", "type-list", "template-string", "containers-mapping", "odd-containers",
         "policy-string", "odd-claims"],
)
def test_malformed_fields_are_left_for_validation_without_raising(spec: dict[str, Any]) -> None:
    obj = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"}, "spec": spec}
    out = apply_defaults(obj, gates=GATES_ON)
    for key, value in spec.items():
        if not isinstance(value, dict | list):  # a wrong scalar is kept verbatim for validation to name
            assert out["spec"][key] == value
    assert apply_defaults(out, gates=GATES_ON) == out


_json_leaf = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "RollingUpdate", "OnDelete", "x"])
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["spec", "type", "rollingUpdate", "enforcedRollingUpdate", "updateStrategy", "template",
                         "containers", "image", "maxUnavailable", "metadata", "volumeClaimTemplates"]),
        inner, max_size=4),
    max_leaves=20,
)


@given(obj=st.dictionaries(st.sampled_from(["metadata", "spec", "kind"]), _json, max_size=3),
       gate=st.booleans())
@example(obj={"spec": {"template": {"spec": []}}}, gate=False)  # an empty pod spec of the wrong type, dropped once
def test_defaulting_arbitrary_shapes_never_raises_and_is_idempotent(obj: dict[str, Any], gate: bool) -> None:
    gates = FeatureGates().with_overrides({MAX_UNAVAILABLE: gate})
    once = apply_defaults(obj, gates=gates)
    assert apply_defaults(once, gates=gates) == once
