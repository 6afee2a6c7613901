"""Leader transfer through `rollwise run`: the operator's quorum-aware companion asks the leader's pod to hand over
(the rollwise.dev/transfer-leadership-to annotation, a pod patch through lightkube), waits while no other member
leads, and deletes the old leader only once the application's agent has moved leadership. Roles come from a pod
label here; the test plays the agent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubectl_support import Up, statefulset
from operator_support import Operator, audit_entries, get_json, leading_operator, running_up_for_operator

pytestmark = pytest.mark.kubectl

TRANSFER_TO = "rollwise.dev/transfer-leadership-to"


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    with running_up_for_operator(tmp_path, companion=False) as server:
        yield server


@pytest.fixture
def operator(up: Up, tmp_path: Path) -> Iterator[Operator]:
    up.install_rollwise()
    with leading_operator(up, tmp_path) as op:
        yield op


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
