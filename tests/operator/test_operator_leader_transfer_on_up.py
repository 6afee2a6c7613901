"""Leader transfer through `rollwise run`, for an apps/v1 set (the companion) and an etcd set of the custom kind
(the operator's chain: its StatefulSet controller, then the quorum-aware one): the quorum-aware controller asks the
leader's pod to hand over (the rollwise.dev/transfer-leadership-to annotation, a pod patch through lightkube), waits
while no other member leads, and deletes the old leader only once the application's agent has moved leadership.
Roles come from a pod label here; the test plays the agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zygote
from kubectl_support import DEADLINE, Up, running_up, statefulset
from operator_support import Operator, audit_entries, get_json, leading_operator

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True, companion=False),
    pytest.mark.operator("--trace", "{tmp}/decisions.jsonl"),
]

TRANSFER_TO = "rollwise.dev/transfer-leadership-to"


def _pods(up: Up) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in get_json(up, "pods", "-l", "app=qa")["items"]}


def test_the_companion_asks_the_leader_to_hand_over_and_deletes_it_only_after_the_agent_did(
        up: Up, operator: Operator) -> None:
    notes = ('{rollwise.dev/update-policy: QuorumAware, rollwise.dev/role-label: role, '
             'rollwise.dev/leader-transfer: "true"}')
    manifest = statefulset("qa", replicas=3, claims=False, image="nginx:1.26", strategy="{type: OnDelete}").replace(
        "metadata:\n  name: qa", f"metadata:\n  name: qa\n  annotations: {notes}")
    up.apply(manifest)
    up.kubectl("wait", "sts/qa", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    up.kubectl("label", "pod", "qa-0", "role=leader")
    old_uid = _pods(up)["qa-0"]["metadata"]["uid"]
    up.kubectl("set", "image", "sts/qa", "app=nginx:1.27")

    def asked() -> bool:
        return TRANSFER_TO in (_pods(up).get("qa-0", {}).get("metadata", {}).get("annotations") or {})

    up.until(asked, "the companion asks qa-0 to hand leadership over")
    pods = _pods(up)
    target = pods["qa-0"]["metadata"]["annotations"][TRANSFER_TO]
    assert target in ("qa-1", "qa-2")
    assert pods[target]["spec"]["containers"][0]["image"] == "nginx:1.27"  # an updated follower
    assert pods["qa-0"]["metadata"]["uid"] == old_uid and "deletionTimestamp" not in pods["qa-0"]["metadata"]

    # The agent: leadership moves to the target, in the order a Raft store's would show it.
    up.kubectl("label", "pod", "qa-0", "role=follower", "--overwrite")
    up.kubectl("label", "pod", target, "role=leader", "--overwrite")
    up.until(lambda: sorted(p["spec"]["containers"][0]["image"] for p in _pods(up).values()) == ["nginx:1.27"] * 3
             and _pods(up)["qa-0"]["metadata"]["uid"] != old_uid, "the old leader is replaced")
    ours = [e for e in audit_entries(up) if e["user"] == "op-a" and e["resource"] == "pods"]
    patches = [e for e in ours if e["verb"] == "patch"]
    assert len(patches) == 1, patches  # one request, not one per reconcile
    assert len([e for e in ours if e["verb"] == "delete"]) == 3
    events = up.kubectl("get", "events", "--field-selector", "involvedObject.name=qa").stdout
    assert "LeaderTransferRequested" in events and "LeaderTransferTimedOut" not in events


ETCD = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata:
  name: etcd
  namespace: default
  annotations: {rollwise.dev/update-policy: QuorumAware, rollwise.dev/role-label: role,
                rollwise.dev/leader-transfer: "true"}
spec:
  replicas: 3
  podManagementPolicy: Parallel
  updateStrategy: {type: OnDelete}
  selector: {matchLabels: {app: etcd}}
  template:
    metadata: {labels: {app: etcd}}
    spec: {containers: [{name: etcd, image: "nginx:1.26"}]}
"""
"""An etcd set of the custom kind handed to the quorum-aware controller, roles from a pod label, leader transfer on."""


def test_a_custom_kind_quorum_aware_set_rolls_followers_first_and_the_leader_last_under_the_operator(
        up: Up, operator: Operator, tmp_path: Path) -> None:
    up.apply(ETCD)
    up.kubectl("wait", "rsts/etcd", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    # The leader is the middle ordinal, so neither ordinal order puts it last by chance.
    up.kubectl("label", "pod", "etcd-1", "role=leader")
    uids = {name: p["metadata"]["uid"] for name, p in _members(up).items()}
    up.kubectl("patch", "rsts", "etcd", "--type=merge", "-p",
               '{"spec":{"template":{"spec":{"containers":[{"name":"etcd","image":"nginx:1.27"}]}}}}')

    def asked() -> bool:
        return TRANSFER_TO in (_members(up).get("etcd-1", {}).get("metadata", {}).get("annotations") or {})

    up.until(asked, "the operator asks the leader etcd-1 to hand over once both followers are updated")
    members = _members(up)
    target = members["etcd-1"]["metadata"]["annotations"][TRANSFER_TO]
    assert target in ("etcd-0", "etcd-2")
    assert {n: p["spec"]["containers"][0]["image"] for n, p in members.items()} == {
        "etcd-0": "nginx:1.27", "etcd-1": "nginx:1.26", "etcd-2": "nginx:1.27"}
    assert members["etcd-1"]["metadata"]["uid"] == uids["etcd-1"]
    # The agent: leadership moves to the target.
    up.kubectl("label", "pod", "etcd-1", "role=follower", "--overwrite")
    up.kubectl("label", "pod", target, "role=leader", "--overwrite")
    up.until(lambda: sorted(p["spec"]["containers"][0]["image"] for p in _members(up).values()) == ["nginx:1.27"] * 3
             and _members(up)["etcd-1"]["metadata"]["uid"] != uids["etcd-1"], "the old leader is replaced last")
    deletes = [e["name"] for e in audit_entries(up) if e["resource"] == "pods" and e["verb"] == "delete"]
    assert sorted(deletes[:2]) == ["etcd-0", "etcd-2"] and deletes[2:] == ["etcd-1"], deletes
    assert {e["user"] for e in audit_entries(up) if e["resource"] == "pods" and e["verb"] == "delete"} == {"op-a"}
    events = up.kubectl("get", "events", "--field-selector", "involvedObject.name=etcd").stdout
    assert "QuorumAwareDelete" in events and "LeaderTransferRequested" in events
    # The operator's decision log names the quorum-aware controller for every delete, and check-trace finds the
    # quorum rules kept (no member deleted below quorum, none while an updated one is away).
    decisions = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    deleters = {d["controller"] for d in decisions for a in d["actions"] if a["type"] == "DeletePod"}
    assert deleters == {"quorum-aware-controller"}, deleters
    judged = zygote.run(["check-trace", str(tmp_path / "decisions.jsonl")], env=up.env, timeout=DEADLINE)
    assert judged.returncode == 0 and "no violation" in judged.stdout, judged.stdout


def _members(up: Up) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in get_json(up, "pods", "-l", "app=etcd")["items"]}


def test_with_every_controller_of_up_on_the_operator_alone_runs_a_custom_kind_set(tmp_path: Path) -> None:
    """`up` with its own controller for the custom kind left on: while the operator leads it stands down, so every
    write to the set's pods and status is the operator's."""
    with running_up(tmp_path, "--any-token") as up, leading_operator(up, tmp_path):
        up.apply(ETCD.replace("rollwise.dev/leader-transfer: \"true\"", "rollwise.dev/leader-transfer: \"false\""))
        up.kubectl("wait", "rsts/etcd", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
        up.kubectl("label", "pod", "etcd-1", "role=leader")
        up.kubectl("patch", "rsts", "etcd", "--type=merge", "-p",
                   '{"spec":{"template":{"spec":{"containers":[{"name":"etcd","image":"nginx:1.27"}]}}}}')
        up.until(lambda: sorted(p["spec"]["containers"][0]["image"] for p in _members(up).values())
                 == ["nginx:1.27"] * 3, "the operator replaces every member")
        writes = [e for e in audit_entries(up) if e["verb"] in ("create", "update", "patch", "delete")
                  and (e["resource"] == "pods" or e["resource"].startswith("statefulsets.apps.rollwise.dev"))
                  and not e["user"].startswith("system:node")]
        assert [e["name"] for e in writes if e["resource"] == "pods" and e["verb"] == "delete"][-1] == "etcd-1"
        assert {e["user"] for e in writes} == {"admin", "op-a"}, sorted({e["user"] for e in writes})
        assert {e["user"] for e in writes if e["resource"] == "pods" and e["verb"] in ("create", "delete")} == {"op-a"}
        status = {e["user"] for e in writes if e["resource"] == "statefulsets.apps.rollwise.dev/status"}
        assert status == {"op-a"}, "up's controller of the custom kind never wrote the status beside the operator"
