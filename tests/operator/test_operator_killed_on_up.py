"""The operator killed with SIGKILL in the middle of a rollout and a new one started against `rollwise up`: the
rollout resumes, the set's budget is never exceeded at any moment across the kill and the restart, and no claim is
lost.

The budget is judged from the server's record of the pods over time (a watch opened before the set exists and kept
open to the end), not from the final state; the claims by uid, taken once the set is up and again at the end.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from kubectl_support import DEADLINE, Up
from operator_support import Operator, audit_entries, get_json, rolled_out
from pod_history import PodHistory, unavailable_counts

REPLICAS, BUDGET = 6, 2

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]

DB = f"""\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {{name: db, namespace: default}}
spec:
  replicas: {REPLICAS}
  podManagementPolicy: Parallel
  selector: {{matchLabels: {{app: db}}}}
  updateStrategy: {{type: RollingUpdate, rollingUpdate: {{maxUnavailable: {BUDGET}}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec: {{containers: [{{name: app, image: "db:1"}}]}}
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
"""


def _rolled_out(up: Up, image: str) -> bool:
    return rolled_out(up, "db", REPLICAS, image)


def _claims(up: Up) -> dict[str, str]:
    return {c["metadata"]["name"]: c["metadata"]["uid"] for c in get_json(up, "pvc")["items"]}


def _pod_deletes(up: Up, user: str) -> list[str]:
    return [e["name"] for e in audit_entries(up)
            if e["user"] == user and e["verb"] == "delete" and e["resource"] == "pods"]


def test_an_operator_killed_mid_rollout_is_replaced_and_the_rollout_resumes_within_budget_losing_no_claim(
        up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    history = PodHistory(up.kubeconfig, "default", "app=db")
    a = Operator(up, tmp_path, "op-a")
    b: Operator | None = None
    try:
        a.wait_for(r"op-a started leading")
        up.apply(DB)
        up.until(lambda: _rolled_out(up, "db:1"), "the set comes up through op-a")
        claims = _claims(up)
        assert sorted(claims) == [f"data-db-{i}" for i in range(REPLICAS)]
        up.until(lambda: unavailable_counts(history.events(), "db", REPLICAS)[-1:] == [0],
                 "the watch has seen every pod Ready")
        up_at = len(history.events())

        up.kubectl("patch", "rsts", "db", "--type=merge", "-p",
                   '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"db:2"}]}}}}')
        up.until(lambda: any(e.terminating for e in history.events()[up_at:]), "op-a starts replacing pods")
        os.kill(a.proc.pid, signal.SIGKILL)  # no lease release, possibly between two deletes of one plan
        a.proc.wait(timeout=DEADLINE)
        killed_at = len(history.events())
        assert not _rolled_out(up, "db:2")

        b = Operator(up, tmp_path, "op-b")
        b.wait_for(r"op-b started leading")
        up.until(lambda: _rolled_out(up, "db:2"), "op-b resumes and finishes the rollout")
    finally:
        history.stop()
        for op in (a, b):
            if op is not None:
                op.stop()

    events = history.events()
    counts = unavailable_counts(events, "db", REPLICAS)
    worst = max(counts[up_at:])
    at = counts.index(worst, up_at)
    assert worst <= BUDGET, f"{worst} unavailable at event {at} of {len(events)}: {events[max(0, at - 8):at + 1]}"
    assert 0 < len(_pod_deletes(up, "op-b")) < REPLICAS  # op-b picked up where op-a stopped
    assert len(events) > killed_at
    assert _claims(up) == claims  # every claim still there, the same object (uid) as before the rollout
