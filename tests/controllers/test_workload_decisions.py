"""The Deployment and ReplicaSet controllers' decisions, from views built by hand (no server, no clock)."""

from __future__ import annotations

from typing import Any

from rollwise.controllers.deployment import REVISION, DeploymentView
from rollwise.controllers.deployment import reconcile as deploy
from rollwise.controllers.replicaset import ReplicaSetView
from rollwise.controllers.replicaset import reconcile as replicate
from rollwise.controllers.workload import Create, Delete, Update, UpdateStatus

LABELS = {"app": "web"}


def _template(image: str) -> dict[str, Any]:
    return {"metadata": {"labels": dict(LABELS)}, "spec": {"containers": [{"name": "c", "image": image}]}}


def _deployment(image: str, *, replicas: int = 3, strategy: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "uid": "d-uid", "generation": 2},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(LABELS)}, "template": _template(image),
                     "strategy": strategy or {"type": "RollingUpdate",
                                              "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                     "progressDeadlineSeconds": 600}}


def _rs(name: str, image: str, replicas: int, available: int, revision: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid", "creationTimestamp": 1.0,
                         "annotations": {REVISION: str(revision)},
                         "ownerReferences": [{"uid": "d-uid", "controller": True, "kind": "Deployment"}]},
            "spec": {"replicas": replicas, "template": _template(image)},
            "status": {"replicas": replicas, "availableReplicas": available, "readyReplicas": available}}


def _pod(name: str, *, ready: bool, owner: str = "rs-uid") -> dict[str, Any]:
    conditions = [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": 1.0}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid", "labels": dict(LABELS),
                         "creationTimestamp": 1.0,
                         "ownerReferences": [{"uid": owner, "controller": True, "kind": "ReplicaSet"}]},
            "spec": {"nodeName": "n"},
            "status": {"phase": "Running", "conditions": conditions}}


def test_a_new_template_gets_a_new_replica_set_within_max_surge() -> None:
    plan = deploy(DeploymentView(_deployment("nginx:2"), [_rs("web-old", "nginx:1", 3, 3, 1)], [], now=100.0))
    created = [a.obj for a in plan.actions if isinstance(a, Create)]
    assert len(created) == 1
    assert created[0]["spec"]["replicas"] == 1  # replicas 3 + maxSurge 1 - 3 old
    assert created[0]["metadata"]["annotations"][REVISION] == "2"
    assert created[0]["spec"]["selector"]["matchLabels"]["pod-template-hash"] in created[0]["metadata"]["name"]


def test_old_pods_go_only_while_max_unavailable_zero_keeps_every_replica_available() -> None:
    d = _deployment("nginx:2")
    first = deploy(DeploymentView(d, [_rs("web-old", "nginx:1", 3, 3, 1)], [], now=100.0))
    new = next(a.obj for a in first.actions if isinstance(a, Create))
    unready = {**new, "metadata": {**new["metadata"], "uid": "new-uid"},
               "status": {"replicas": 1, "availableReplicas": 0}}
    waiting = deploy(DeploymentView(d, [_rs("web-old", "nginx:1", 3, 3, 1), unready], [], now=101.0))
    assert not [a for a in waiting.actions if isinstance(a, Update) and a.obj["kind"] == "ReplicaSet"]
    ready = {**unready, "status": {"replicas": 1, "availableReplicas": 1}}
    moving = deploy(DeploymentView(d, [_rs("web-old", "nginx:1", 3, 3, 1), ready], [], now=102.0))
    scaled = {a.obj["metadata"]["name"]: a.obj["spec"]["replicas"] for a in moving.actions
              if isinstance(a, Update) and a.obj["kind"] == "ReplicaSet"}
    assert scaled == {"web-old": 2}


def test_recreate_scales_the_old_set_to_zero_before_any_new_pod() -> None:
    d = _deployment("nginx:2", strategy={"type": "Recreate"})
    plan = deploy(DeploymentView(d, [_rs("web-old", "nginx:1", 3, 3, 1)], [], now=100.0))
    created = [a.obj for a in plan.actions if isinstance(a, Create)]
    assert created and created[0]["spec"]["replicas"] == 0


def test_a_complete_rollout_reports_available_and_new_replica_set_available() -> None:
    d = _deployment("nginx:1")
    plan = deploy(DeploymentView(d, [_rs("web-1", "nginx:1", 3, 3, 1)], [], now=100.0))
    status = next(a.obj["status"] for a in plan.actions if isinstance(a, UpdateStatus))
    reasons = {c["type"]: c["reason"] for c in status["conditions"]}
    assert reasons == {"Available": "MinimumReplicasAvailable", "Progressing": "NewReplicaSetAvailable"}
    assert status["observedGeneration"] == 2 and status["availableReplicas"] == 3


def test_a_replica_set_creates_what_is_missing_and_deletes_the_unready_first() -> None:
    rs = _rs("rs", "nginx:1", 2, 0, 1)
    rs["metadata"]["uid"] = "rs-uid"
    rs["spec"]["selector"] = {"matchLabels": dict(LABELS)}
    grown = replicate(ReplicaSetView(rs, [_pod("a", ready=True)], now=10.0))
    assert [a.obj["metadata"]["ownerReferences"][0]["uid"] for a in grown.actions if isinstance(a, Create)] == [
        "rs-uid"]
    shrunk = replicate(ReplicaSetView({**rs, "spec": {**rs["spec"], "replicas": 1}},
                                      [_pod("a", ready=True), _pod("b", ready=False)], now=10.0))
    assert [a.name for a in shrunk.actions if isinstance(a, Delete)] == ["b"]
