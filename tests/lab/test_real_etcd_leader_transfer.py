"""Leader transfer on real etcd under ``up``'s driver: five healthy members, QuorumAware with
``rollwise.dev/leader-transfer``. The controller asks the leader through the pod annotation, the process kubelet's
agent sends etcd's MoveLeader, the member Leases show the new leader, and only then is the old leader deleted.

Asserts the order of what happened, never a duration.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from member_marks import needs_etcd

from rollwise.lab.experiment import run_real
from rollwise.lab.scenarios import SCENARIOS, STRATEGIES, LabTimings

pytestmark = [
    *needs_etcd,
    pytest.mark.slow,  # a real etcd cluster's timing run; test_real_etcd_rollout.py keeps one in make test
]


def test_the_leader_hands_over_through_move_leader_before_it_is_deleted(tmp_path: pytest.TempPathFactory) -> None:
    timings = replace(LabTimings(), settle_seconds=1.0, probe_period_seconds=0.2)
    run = run_real(SCENARIOS["five"], STRATEGIES["quorum-transfer"], timings, root=tmp_path, timeout=120)

    assert run.figures.completed and not run.figures.quorum_lost
    events = run.result["events"]
    messages = [str(e.get("message", "")) for e in events]
    assert not any("still the leader" in m for m in messages), "the hand-over timed out"
    asked = next(e for e in events if "asked to hand leadership to" in str(e.get("message", "")))
    target = str(asked["message"]).rsplit("asked to hand leadership to ", 1)[1].split()[0]
    old = str(asked["message"]).split("step 4: ", 1)[1].split()[0]
    deleted = next(e for e in events if e["type"] == "PodDeleteRequested" and e["pod"] == old and e["t"] > asked["t"])
    # The poller's view of etcd itself: some member reported the target as leader before the old one was deleted.
    leads = {e.get("pod") for e in events if e["type"] == "LeaderChanged" and asked["t"] <= e["t"] <= deleted["t"]}
    assert target in leads
    assert run.figures.elections == 1  # MoveLeader starts one new term
