"""Canary steps in the pure controller (controllers/statefulset/steps.py): each step is a partition every existing
rule keeps applying to (maxUnavailable, PodDisruptionBudgets); a held canary writes nothing; the canary-step rule
flags a decision that moves past ``pause: {}`` by itself and passes the controller's own."""

from __future__ import annotations

from typing import Any

from builders import make_set
from harness import Harness
from test_disruption_budgets import pdb

from rollwise.controllers.plan import DeletePod, WriteStatus
from rollwise.controllers.statefulset import reconcile
from rollwise.invariants.decision import Decision
from rollwise.invariants.rules import TRANSITION_RULES, judge, partition
from rollwise.invariants.steps import canary_step
from rollwise.runtime.views import set_view


def _canary(steps: list[dict[str, Any]], *, replicas: int = 4, policy: str = "Parallel",
            max_unavailable: int = 1) -> Harness:
    h = Harness(make_set(replicas=replicas, policy=policy, strategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable, "steps": steps}}))
    h.settle()
    return h


def _at_update(h: Harness) -> list[str]:
    update = h.status()["updateRevision"]
    return [name for name, rev in h.pod_revisions().items() if rev == update]


def _judged_settle(h: Harness, syncs: int = 60) -> list[str]:
    """Settle with every decision judged by every transition rule."""
    problems: list[str] = []
    for _ in range(syncs):
        view = set_view(h.cluster, h.sts, now=h.now, gates=h.gates)
        plan = reconcile(view)
        problems += judge(Decision(view=view, actions=plan.actions))
        h.sync()
        h.step_pods()
    return problems


def test_a_replicas_step_is_a_partition_the_budget_still_bounds() -> None:
    h = _canary([{"replicas": 3}, {"pause": {}}], max_unavailable=2)
    h.set_image("nginx:2")
    deleted = [a.name for a in h.sync().actions if isinstance(a, DeletePod)]
    assert deleted == ["foo-3", "foo-2"]  # two at a time (maxUnavailable 2), highest ordinals first
    assert _judged_settle(h) == []
    assert _at_update(h) == ["foo-1", "foo-2", "foo-3"]  # foo-0 stays until promoted


def test_a_pod_disruption_budget_still_bounds_a_step() -> None:
    h = _canary([{"replicas": "50%"}, {"pause": {}}], max_unavailable=4)
    h.cluster.create(pdb(minAvailable=3))
    h.set_image("nginx:2")
    deleted = [a.name for a in h.sync().actions if isinstance(a, DeletePod)]
    assert deleted == ["foo-3"]  # the step wants two, the budget allows one at a time
    assert _judged_settle(h) == []
    assert _at_update(h) == ["foo-2", "foo-3"]


def test_a_held_canary_writes_nothing_and_says_where_it_stands() -> None:
    h = _canary([{"replicas": 1}, {"pause": {}}, {"replicas": 2}])
    h.set_image("nginx:2")
    h.settle()
    assert h.plan().actions == ()
    progressing = next(c for c in h.status()["conditions"] if c["type"] == "Progressing")
    assert progressing["message"] == "step 2 of 3 (pause until promoted): paused until promoted"
    h.now += 3600
    assert h.plan().actions == ()  # an hour later: still nothing to write


def test_a_timed_pause_asks_to_be_woken_when_it_ends() -> None:
    h = _canary([{"replicas": 1}, {"pause": {"duration": "90s"}}])
    h.now = 1000.25
    h.set_image("nginx:2")
    h.settle()
    assert h.status()["pauseStartTime"] == 1001.0  # whole seconds, rounded up: the pause lasts at least 90 s
    assert h.plan().requeue_after == 1091.0 - h.now
    h.now = 1091.0
    assert [a.name for a in h.sync().actions if isinstance(a, DeletePod)] == ["foo-2"]


def test_the_canary_step_rule_flags_a_move_past_an_indefinite_pause() -> None:
    h = _canary([{"replicas": 1}, {"pause": {}}])
    h.set_image("nginx:2")
    h.settle()
    view = set_view(h.cluster, h.sts, now=h.now, gates=h.gates)
    forged = WriteStatus(status={**h.status(), "currentStepIndex": 2})
    assert canary_step(Decision(view=view, actions=(forged,))) == [
        "moved past step 2 (pause until promoted) without a promote"]
    assert "canary-step" in TRANSITION_RULES
    pods = {p["metadata"]["name"]: p for p in view.pods}
    greedy = DeletePod(name="foo-2", namespace="default", uid=pods["foo-2"]["metadata"]["uid"], revision="",
                       reason="")
    assert partition(Decision(view=view, actions=(greedy,))) == ["deleted foo-2 below partition 3"]


def test_a_pod_recreated_below_the_step_is_updated_after_promote_without_churn() -> None:
    h = _canary([{"replicas": 1}, {"pause": {}}])
    h.set_image("nginx:2")
    h.settle()
    h.cluster.delete("Pod", "default", "foo-1", grace_period_seconds=0)
    assert _judged_settle(h, 10) == []
    assert _at_update(h) == ["foo-3"]  # foo-1 came back at the stable revision
    h.cluster.update_status({**h.sts, "status": {**h.status(), "currentStepIndex": 2}})  # the promote's write
    assert _judged_settle(h) == []
    assert _at_update(h) == ["foo-0", "foo-1", "foo-2", "foo-3"]


def test_steps_cut_short_mid_rollout_let_the_rest_follow() -> None:
    h = _canary([{"replicas": 1}, {"pause": {}}, {"replicas": 2}, {"pause": {}}])
    h.set_image("nginx:2")
    h.settle()
    h.cluster.update_status({**h.sts, "status": {**h.status(), "currentStepIndex": 3}})
    h.settle()
    assert _at_update(h) == ["foo-2", "foo-3"]
    h.patch_set({"spec": {"updateStrategy": {"rollingUpdate": {"steps": [{"replicas": 1}, {"pause": {}}]}}}})
    assert _judged_settle(h) == []
    assert _at_update(h) == ["foo-0", "foo-1", "foo-2", "foo-3"] and h.status()["currentStepIndex"] == 2
