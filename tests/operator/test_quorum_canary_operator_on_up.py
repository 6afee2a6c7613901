"""A quorum-aware canary on `rollwise up` with the real operator (`rollwise run`) and real etcd members: a 4-member
etcd set of the custom kind, QuorumAware with steps ``[{replicas: 1}, {pause: {}}]``, whose leader is first moved to
the highest ordinal (``etcdctl move-leader`` in a member, as a user would). The template change updates one
follower, never the leader a rolling update's canary would have taken (the highest ordinal), and holds there; after
``kubectl rollwise rollout promote`` the other members follow, the leader last, each on its own claim's data.
Every process is started here and ended by its pid; every wait has a deadline."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubectl_support import DEADLINE, Up
from member_marks import needs_etcd
from operator_support import Operator, audit_entries, get_json, last_audit_time

from rollwise.api.leases import LEADER, lease_role

pytestmark = [
    pytest.mark.kubectl,
    *needs_etcd,
    pytest.mark.up(for_operator=True, plugin=True),
]

MEMBERS = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata:
  name: etcd
  namespace: default
  annotations: {rollwise.dev/update-policy: QuorumAware}
spec:
  replicas: 4
  serviceName: etcd-peer
  podManagementPolicy: Parallel
  updateStrategy:
    type: OnDelete
    rollingUpdate:
      steps: [{replicas: 1}, {pause: {}}]
  selector: {matchLabels: {app: etcd}}
  template:
    metadata: {labels: {app: etcd}}
    spec:
      terminationGracePeriodSeconds: 10
      containers:
      - name: etcd
        image: "etcd:3.5.1"
        readinessProbe: {exec: {command: [etcdctl, endpoint, health]}, periodSeconds: 1}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""
IMAGE = '{"spec":{"template":{"spec":{"containers":[{"name":"etcd","image":"etcd:3.5.1-r1"}]}}}}'
PODS = ("etcd-0", "etcd-1", "etcd-2", "etcd-3")


def _status(up: Up) -> dict[str, Any]:
    return get_json(up, "rsts", "etcd").get("status") or {}


def _pods(up: Up) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in get_json(up, "pods", "-l", "app=etcd")["items"]
            if not p["metadata"].get("deletionTimestamp")}


def _ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in (pod.get("status") or {}).get("conditions", ()))


def _at_update(up: Up) -> list[str]:
    update = _status(up).get("updateRevision")
    return sorted(n for n, p in _pods(up).items() if p["metadata"]["labels"].get("controller-revision-hash") == update)


def _all_ready(up: Up) -> bool:
    pods = _pods(up)
    return len(pods) == 4 and all(_ready(p) for p in pods.values())


def _roles(up: Up) -> dict[str, Any]:
    """Pod -> the role its member Lease states (up writes each from that member's own etcd status)."""
    return {lease["metadata"]["name"]: lease_role(lease) for lease in get_json(up, "leases")["items"]}


def _leader(up: Up) -> str | None:
    leaders = [name for name, role in _roles(up).items() if role == LEADER and name in PODS]
    return leaders[0] if len(leaders) == 1 else None


def _member_id(up: Up, pod: str) -> str:
    """The member's id in hex, as etcdctl prints and takes it, read inside the member."""
    out = up.kubectl("exec", pod, "--", "etcdctl", "endpoint", "status", "-w", "json").stdout
    return format(int(json.loads(out)[0]["Status"]["header"]["member_id"]), "x")


def _deletes(up: Up, since: float) -> list[str]:
    return [e.get("name", "") for e in audit_entries(up)
            if e["resource"] == "pods" and e["verb"] == "delete" and e["time"] >= since and e["user"] == "op-a"]


def _allmembers(up: Up) -> dict[str, Any]:
    return next((c for c in _status(up).get("conditions") or () if c["type"] == "AllMembersUpdated"), {})


def test_the_canary_is_a_follower_not_the_leader_at_the_highest_ordinal_and_the_leader_goes_last(
        up: Up, operator: Operator) -> None:
    up.apply(MEMBERS)
    up.until(lambda: _all_ready(up) and _leader(up) is not None, "four Ready members and one leader",
             deadline=DEADLINE * 2, on_fail=lambda: str(_roles(up)))
    # The leader to the highest ordinal: where a rolling update's canary of one would land.
    leader = _leader(up)
    assert leader is not None
    if leader != "etcd-3":
        # etcdctl move-leader names its endpoints by flag and refuses the same in the environment.
        up.kubectl("exec", leader, "--", "sh", "-c", 'ep="$ETCDCTL_ENDPOINTS"; unset ETCDCTL_ENDPOINTS; '
                   f'etcdctl --endpoints="$ep" move-leader {_member_id(up, "etcd-3")}')
    up.until(lambda: _leader(up) == "etcd-3", "etcd-3 leads", on_fail=lambda: str(_roles(up)))
    claims = {c["metadata"]["name"]: c["metadata"]["uid"] for c in get_json(up, "pvc")["items"]}
    since = last_audit_time(up)

    up.kubectl("patch", "rsts", "etcd", "--type=merge", "-p", IMAGE)
    up.until(lambda: _status(up).get("currentStepIndex") == 1 and _all_ready(up) and len(_at_update(up)) == 1
             and "canary step: 1 of 4" in _allmembers(up).get("message", ""),
             "the canary holds one updated member at the pause", deadline=DEADLINE * 2,
             on_fail=lambda: f"{_status(up)}\n{_at_update(up)}")
    # DEP-07's order: the highest-ordinal follower, not the leader.
    assert _at_update(up) == ["etcd-2"]
    assert _deletes(up, since) == ["etcd-2"]
    assert _leader(up) == "etcd-3"
    progressing = next(c for c in _status(up)["conditions"] if c["type"] == "Progressing")
    assert progressing["message"] == "step 2 of 2 (pause until promoted): paused until promoted"

    promoted = up.plugin("rollout", "promote", "rsts/etcd")
    assert promoted.returncode == 0, promoted.stderr
    assert promoted.stdout == "statefulset.apps.rollwise.dev/etcd promoted: past the last step, the rest follows\n"
    up.until(lambda: _all_ready(up) and _at_update(up) == list(PODS)
             and _status(up).get("currentRevision") == _status(up).get("updateRevision"),
             "every member at the new revision after promote", deadline=DEADLINE * 3,
             on_fail=lambda: f"{_status(up)}\n{_deletes(up, since)}")
    deletes = _deletes(up, since)
    assert deletes[0] == "etcd-2" and deletes[-1] == "etcd-3" and sorted(deletes) == sorted(PODS), deletes
    # Each member came back on its own claim.
    assert {c["metadata"]["name"]: c["metadata"]["uid"] for c in get_json(up, "pvc")["items"]} == claims
