"""Templates that the API server stores alike share one revision: no pod is replaced for a change of spelling."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import make_set

from rollwise.api.defaults import stored_template
from rollwise.api.revisions import new_revision
from rollwise.api.stored import stored_pod_template

BASE: dict[str, Any] = {"name": "app", "image": "app:v1", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}


def _with_container(**fields: Any) -> dict[str, Any]:
    return {**copy.deepcopy(BASE), **fields}


SAME = [
    ("cpu 0.5 for 500m", _with_container(resources={"requests": {"cpu": 0.5, "memory": "1Gi"}}), {}),
    ("cpu '0.5' for 500m", _with_container(resources={"requests": {"cpu": "0.5", "memory": "1Gi"}}), {}),
    ("memory 1024Mi for 1Gi", _with_container(resources={"requests": {"cpu": "500m", "memory": "1024Mi"}}), {}),
    ("empty limits", _with_container(resources={"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {}}), {}),
    ("env []", _with_container(env=[]), {}),
    ("env null", _with_container(env=None), {}),
    ("ports []", _with_container(ports=[]), {}),
    ("command []", _with_container(command=[]), {}),
    ("tty false", _with_container(tty=False), {}),
    ("imagePullPolicy at its default", _with_container(imagePullPolicy="IfNotPresent"), {}),
    ("terminationMessagePath at its default", _with_container(terminationMessagePath="/dev/termination-log"), {}),
    ("volumes []", _with_container(), {"volumes": []}),
    ("nodeSelector {}", _with_container(), {"nodeSelector": {}}),
    ("hostNetwork false", _with_container(), {"hostNetwork": False}),
    ("restartPolicy at its default", _with_container(), {"restartPolicy": "Always"}),
    ("terminationGracePeriodSeconds at its default", _with_container(), {"terminationGracePeriodSeconds": 30}),
    ("tolerations null", _with_container(), {"tolerations": None}),
]

DIFFERENT = [
    ("cpu 1 for 500m", _with_container(resources={"requests": {"cpu": "1", "memory": "1Gi"}}), {}),
    ("1e3 is not 1k", _with_container(resources={"requests": {"cpu": "500m", "memory": "1e9"}}), {}),
    ("env set", _with_container(env=[{"name": "A", "value": "1"}]), {}),
    ("tty true", _with_container(tty=True), {}),
    ("grace 0 is not the default", _with_container(), {"terminationGracePeriodSeconds": 0}),
    ("automountServiceAccountToken false is a pointer", _with_container(), {"automountServiceAccountToken": False}),
]


def _revision_name(container: dict[str, Any], pod_fields: dict[str, Any]) -> str:
    sts = make_set()
    sts["spec"]["template"]["spec"] = {**sts["spec"]["template"]["spec"], "containers": [container], **pod_fields}
    return str(new_revision(sts, number=1, collision_count=0)["metadata"]["name"])


@pytest.mark.parametrize(("case", "container", "pod_fields"), SAME, ids=[c for c, _, _ in SAME])
def test_templates_stored_alike_share_a_revision(case: str, container: dict[str, Any],
                                                 pod_fields: dict[str, Any]) -> None:
    assert _revision_name(container, pod_fields) == _revision_name(BASE, {})


@pytest.mark.parametrize(("case", "container", "pod_fields"), DIFFERENT, ids=[c for c, _, _ in DIFFERENT])
def test_templates_stored_differently_get_a_new_revision(case: str, container: dict[str, Any],
                                                         pod_fields: dict[str, Any]) -> None:
    assert _revision_name(container, pod_fields) != _revision_name(BASE, {})


def test_stored_form_canonicalises_every_quantity_of_a_pod_template() -> None:
    template = {"spec": {
        "containers": [{"name": "a", "resources": {"limits": {"cpu": 2.5}},
                        "env": [{"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu",
                                                                                   "divisor": "0.001"}}}]}],
        "initContainers": [{"name": "i", "resources": {"requests": {"memory": "2048Ki"}}}],
        "overhead": {"cpu": "0.1"},
        "resources": {"limits": {"memory": "1.5Gi"}},
        "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "1000M"}},
                    {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {
                        "resources": {"requests": {"storage": "0.5Gi"}}}}}}],
    }}
    spec = stored_pod_template(template)["spec"]
    assert spec["containers"][0]["resources"]["limits"]["cpu"] == "2500m"
    assert spec["containers"][0]["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"] == "1m"
    assert spec["initContainers"][0]["resources"]["requests"]["memory"] == "2Mi"
    assert spec["overhead"]["cpu"] == "100m"
    assert spec["resources"]["limits"]["memory"] == "1536Mi"
    assert spec["volumes"][0]["emptyDir"]["sizeLimit"] == "1G"
    assert spec["volumes"][1]["ephemeral"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] \
        == "512Mi"


def test_stored_form_keeps_what_go_keeps() -> None:
    template = {"spec": {"containers": [], "securityContext": {},
                         "initContainers": [{"name": "i", "resources": {}, "securityContext": {"privileged": False}}]}}
    stored = stored_pod_template(template)
    assert stored["spec"]["containers"] == []
    assert stored["spec"]["securityContext"] == {}
    assert stored["spec"]["initContainers"][0] == {"name": "i", "resources": {},
                                                   "securityContext": {"privileged": False}}


def test_an_invalid_quantity_is_left_for_validation() -> None:
    template = {"spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "lots"}}}]}}
    assert stored_pod_template(template)["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "lots"


def test_stored_template_is_idempotent_and_leaves_its_input_alone() -> None:
    template = {"metadata": {"labels": {}}, "spec": {"containers": [_with_container(env=[], tty=False)]}}
    before = copy.deepcopy(template)
    once = stored_template(template)
    assert stored_template(once) == once
    assert template == before
