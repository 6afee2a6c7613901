"""A pod on ``rollwise up`` is scheduled as kube-scheduler schedules it (api/scheduling.py, local/scheduler.py): on a
cordoned node, a node whose taint it does not tolerate, or one whose labels its nodeSelector does not match, it stays
Pending (PodScheduled False, Unschedulable, upstream's message) and no container starts; once the node can take it,
it is bound and runs. Driven with the real kubectl and lightkube."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubectl_support import Up, statefulset
from lightkube import Client, KubeConfig
from lightkube.resources.core_v1 import Pod

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(shared=True),
]

NODE = "rollwise-node"
PREEMPTION = " preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."


def _pod(name: str, **spec: Any) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}], **spec}})


def _scheduled(pod: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")


def _reasons(up: Up, name: str) -> list[str]:
    """The reasons of the pod's Events."""
    listed = json.loads(up.kubectl("get", "events", "--field-selector", f"involvedObject.name={name}",
                                   "-o", "json").stdout)["items"]
    return [e["reason"] for e in listed]


def _pending_for(up: Up, name: str, message: str) -> None:
    pod = up.read("pod", name)
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    condition = _scheduled(pod)
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", message)
    assert not pod["status"].get("containerStatuses"), "no kubelet runs a pod that is on no node"


def test_a_pod_waits_on_a_cordoned_node_and_runs_once_it_is_uncordoned(up: Up) -> None:
    up.kubectl("cordon", NODE)
    try:
        up.apply(_pod("cordoned"))
        _pending_for(up, "cordoned", "0/1 nodes are available: 1 node(s) were unschedulable." + PREEMPTION)
        shown = up.kubectl("get", "pod", "cordoned", "--no-headers").stdout.split()
        assert shown[1:3] == ["0/1", "Pending"], shown
        up.until(lambda: "FailedScheduling" in _reasons(up, "cordoned"), "a FailedScheduling event")
        assert "Scheduled" not in _reasons(up, "cordoned")
    finally:
        up.kubectl("uncordon", NODE)
    up.kubectl("wait", "--for=condition=Ready", "pod/cordoned", "--timeout=60s")
    assert {"FailedScheduling", "Scheduled"} <= set(_reasons(up, "cordoned"))
    pod = up.read("pod", "cordoned")
    assert pod["spec"]["nodeName"] == NODE and _scheduled(pod)["status"] == "True"


def test_a_taint_holds_pods_that_do_not_tolerate_it(up: Up) -> None:
    up.kubectl("taint", "nodes", NODE, "dedicated=db:NoSchedule")
    try:
        lk = Client(KubeConfig.from_file(up.kubeconfig), field_manager="scheduling-test", trust_env=False)
        lk.create(Pod.from_dict(json.loads(_pod("untolerated"))), namespace="default")
        tolerant = lk.create(Pod.from_dict(json.loads(_pod("tolerant", tolerations=[
            {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoSchedule"}]))),
            namespace="default")
        assert tolerant.spec.nodeName == NODE
        held = lk.get(Pod, "untolerated", namespace="default")
        assert held.spec.nodeName is None and held.status.phase == "Pending"
        _pending_for(up, "untolerated",
                     "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: db}." + PREEMPTION)
    finally:
        up.kubectl("taint", "nodes", NODE, "dedicated=db:NoSchedule-")
    up.kubectl("wait", "--for=condition=Ready", "pod/untolerated", "--timeout=60s")


def test_a_node_selector_waits_for_a_node_with_the_label(up: Up) -> None:
    up.apply(_pod("picky", nodeSelector={"disktype": "ssd"}))
    _pending_for(up, "picky", "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
                 + PREEMPTION)
    up.kubectl("label", "node", NODE, "disktype=ssd")
    try:
        up.kubectl("wait", "--for=condition=Ready", "pod/picky", "--timeout=60s")
    finally:
        up.kubectl("label", "node", NODE, "disktype-")


def test_a_statefulset_pod_recreated_on_a_cordoned_node_is_pending_until_uncordoned(up: Up) -> None:
    up.apply(statefulset("solo", image="nginx:1.27", replicas=1, claims=False))
    up.kubectl("rollout", "status", "sts/solo", "--timeout=60s")
    first = up.read("pod", "solo-0")["metadata"]["uid"]
    up.kubectl("cordon", NODE)
    try:
        up.kubectl("delete", "pod", "solo-0")
        up.until(lambda: _recreated_pending(up, first), "solo-0 recreated and Pending")
        assert up.read("sts", "solo")["status"].get("readyReplicas", 0) == 0
    finally:
        up.kubectl("uncordon", NODE)
    up.kubectl("rollout", "status", "sts/solo", "--timeout=60s")


def _recreated_pending(up: Up, uid: str) -> bool:
    try:
        pod = up.read("pod", "solo-0")
    except Exception:  # between the deletion and the recreation
        return False
    conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or ()}
    return pod["metadata"]["uid"] != uid and conditions.get("PodScheduled") == "False"


def _jsonpath(up: Up, name: str, path: str) -> str:
    return up.kubectl("get", "pod", name, "-o", f"jsonpath={path}").stdout


def test_a_gated_pod_stays_pending_until_its_gates_are_removed_and_none_can_be_added(up: Up) -> None:
    up.apply(_pod("gated", schedulingGates=[{"name": "example.com/quota"}, {"name": "example.com/data"}]))
    scheduled = '{.status.conditions[?(@.type=="PodScheduled")]'
    assert _jsonpath(up, "gated", scheduled + '.status}') == "False"
    assert _jsonpath(up, "gated", scheduled + '.reason}') == "SchedulingGated"
    assert _jsonpath(up, "gated", scheduled + '.message}') == "Scheduling is blocked due to non-empty scheduling gates"
    assert _jsonpath(up, "gated", "{.status.phase}") == "Pending"
    assert _jsonpath(up, "gated", "{.spec.nodeName}") == ""
    shown = up.kubectl("get", "pod", "gated", "--no-headers").stdout.split()
    assert shown[1:3] == ["0/1", "SchedulingGated"], shown
    # One gate left still holds it; the scheduler does not try a gated pod, so it writes no FailedScheduling.
    up.kubectl("patch", "pod", "gated", "--type", "json", "-p", '[{"op":"remove","path":"/spec/schedulingGates/0"}]')
    assert _jsonpath(up, "gated", scheduled + '.reason}') == "SchedulingGated"
    assert _jsonpath(up, "gated", "{.spec.nodeName}") == ""
    assert "FailedScheduling" not in _reasons(up, "gated")

    up.kubectl("patch", "pod", "gated", "--type", "json", "-p", '[{"op":"remove","path":"/spec/schedulingGates"}]')
    up.until(lambda: _jsonpath(up, "gated", '{.status.conditions[?(@.type=="Ready")].status}') == "True",
             "the ungated pod Ready")
    assert _jsonpath(up, "gated", "{.spec.nodeName}") == NODE
    assert _jsonpath(up, "gated", scheduled + '.status}') == "True"

    added = up.kubectl("patch", "pod", "gated", "--type", "merge", "-p",
                       '{"spec":{"schedulingGates":[{"name":"example.com/late"}]}}', check=False)
    assert added.returncode != 0
    assert "spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate " \
           "'example.com/late'" in added.stderr, added.stderr
    bound = up.kubectl("apply", "-f", "-", check=False, stdin=_pod(
        "gated-on-node", nodeName=NODE, schedulingGates=[{"name": "example.com/quota"}]))
    assert bound.returncode != 0
    assert "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared" in bound.stderr, \
        bound.stderr
