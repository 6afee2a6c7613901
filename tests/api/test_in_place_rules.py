"""The pure rules of in-place image updates (api/in_place.py): what counts as "only images differ", when the
update is through, and how the field is validated and reported as a proposal on apps/v1."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rollwise.api import predicates as p
from rollwise.api.defaults import apply_defaults
from rollwise.api.features import FeatureGates
from rollwise.api.in_place import (
    IN_PLACE_ANNOTATION,
    images_only_difference,
    in_place_done,
    in_place_finished,
    in_place_patched,
    in_place_pending,
    in_place_started_at,
    pod_update_policy,
)
from rollwise.api.validation import validate_statefulset
from rollwise.api.versions import UNKNOWN_FIELD, parse_kube_version, proposal_uses


def _template(**container: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "app:v1", **container},
                                    {"name": "side", "image": "side:v1"}]}}


@pytest.mark.parametrize(("new", "images", "path"), [
    (_template(image="app:v2"), {"app": "app:v2"}, ""),
    (_template(), {}, ""),
    (_template(image="app:v2", env=[{"name": "A", "value": "1"}]), {}, "spec.template.spec.containers[0].env"),
    ({**_template(), "metadata": {"labels": {"app": "web", "tier": "x"}}}, {}, "spec.template.metadata"),
    ({**_template(), "spec": {**_template()["spec"], "nodeSelector": {"a": "b"}}}, {},
     "spec.template.spec.nodeSelector"),
    ({**_template(), "spec": {"containers": _template()["spec"]["containers"][:1]}}, {},
     "spec.template.spec.containers"),
], ids=["image", "same", "env", "labels", "pod-field", "container-removed"])
def test_only_images_may_differ_and_anything_else_is_named(new: dict[str, Any], images: dict[str, str],
                                                         path: str) -> None:
    assert images_only_difference(_template(), new) == (images, path)


def _pod(image_id: str = "sha256:old", *, state: str = "running", ready: bool = True) -> dict[str, Any]:
    return {"metadata": {"name": "web-0", "labels": {"controller-revision-hash": "web-1"}},
            "spec": {"containers": [{"name": "app", "image": "app:v1"}]},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "containerStatuses": [{"name": "app", "image": "app:v1", "imageID": image_id,
                                              "ready": ready, "state": {state: {}}}]}}


def test_the_patch_sets_images_label_and_record_and_the_pod_stops_counting_ready_at_once() -> None:
    pod = _pod()
    assert p.is_running_and_ready(pod)
    patched = in_place_patched(pod, {"app": "app:v2"}, "web-2", "controller-revision-hash", at=30.0)
    assert patched["spec"]["containers"][0]["image"] == "app:v2"
    assert patched["metadata"]["labels"]["controller-revision-hash"] == "web-2"
    assert json.loads(patched["metadata"]["annotations"][IN_PLACE_ANNOTATION]) == {
        "revision": "web-2", "at": 30.0, "imageIDs": {"app": "sha256:old"}}
    assert in_place_pending(patched) and not p.is_running_and_ready(patched), \
        "the status still says Ready (the old container's), yet the pod is restarting"
    assert p.unavailable_cause(patched, 0, 0) == "containers restarting for an in-place update"
    assert pod["spec"]["containers"][0]["image"] == "app:v1", "the pod read is left as it was"


@pytest.mark.parametrize(("image_id", "state", "done"), [
    ("sha256:old", "running", False),   # the kubelet has not restarted it yet
    ("sha256:new", "waiting", False),   # the new container is being created
    ("", "waiting", False),
    ("sha256:new", "running", True),
])
def test_the_update_is_through_once_every_changed_container_runs_a_new_image(
        image_id: str, state: str, done: bool) -> None:
    patched = in_place_patched(_pod(), {"app": "app:v2"}, "web-2", "controller-revision-hash", at=30.0)
    status = {**patched["status"], "containerStatuses": [{"name": "app", "image": "app:v2", "imageID": image_id,
                                                          "ready": False, "state": {state: {}}}]}
    assert in_place_done({**patched, "status": status}) is done
    finished = in_place_finished(patched)
    assert not in_place_pending(finished) and in_place_started_at(finished) == 30.0, \
        "the start is kept: podProgressTimeoutSeconds counts from it"


def test_a_malformed_record_counts_as_done_so_the_controller_clears_it() -> None:
    pod = _pod()
    pod["metadata"]["annotations"] = {IN_PLACE_ANNOTATION: "{not json"}
    assert in_place_done(pod)
    assert IN_PLACE_ANNOTATION not in (in_place_finished(pod)["metadata"].get("annotations") or {})
    assert "annotations" not in in_place_finished(pod)["metadata"]


def _set(block: dict[str, Any], api_version: str = "apps/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": block},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}}}


def test_an_unknown_policy_is_refused_with_its_path_and_the_choices() -> None:
    gates = FeatureGates()
    errors = [str(e) for e in validate_statefulset(apply_defaults(_set({"podUpdatePolicy": "InPlace"}), gates=gates),
                                                   gates=gates)]
    assert errors == ['spec.updateStrategy.rollingUpdate.podUpdatePolicy: Unsupported value: "InPlace": '
                      'supported values: "ReCreate", "InPlaceIfPossible", "InPlaceOnly"']
    assert validate_statefulset(apply_defaults(_set({"podUpdatePolicy": "InPlaceOnly"}), gates=gates),
                                gates=gates) == []
    assert pod_update_policy({"podUpdatePolicy": "InPlaceOnly"}) == "InPlaceOnly"
    assert pod_update_policy(None) == pod_update_policy({"podUpdatePolicy": "x"}) == "ReCreate"


def test_on_apps_v1_the_policy_is_a_proposal_no_release_knows() -> None:
    release, errors = parse_kube_version("1.37", {})
    assert release is not None and not errors
    uses = proposal_uses(_set({"podUpdatePolicy": "InPlaceIfPossible"}), None, release)
    assert [(u.path, u.answer) for u in uses] == [("spec.updateStrategy.rollingUpdate.podUpdatePolicy",
                                                   UNKNOWN_FIELD)]
