"""The disruption-budget invariant: it flags a voluntary deletion past a PodDisruptionBudget's allowance, passes
what the controller decides, and ignores failed pods and the quorum-aware controller; a decision log keeps the
budgets so ``rollwise check-trace`` judges them too."""

from __future__ import annotations

import json

from builders import make_set, pdb
from harness import Harness

from rollwise.controllers.statefulset import reconcile
from rollwise.invariants.decision import Decision, delete_of
from rollwise.invariants.log import decode, encode
from rollwise.invariants.rules import TRANSITION_RULES, disruption_budget
from rollwise.runtime.views import set_view


def _view(h: Harness):  # type: ignore[no-untyped-def]
    return set_view(h.cluster, h.sts, now=h.now, gates=h.gates)


def _settled() -> Harness:
    h = Harness(make_set(replicas=3, policy="Parallel",
                         strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}}))
    h.settle()
    h.cluster.create(pdb(minAvailable=2))
    return h


def test_two_healthy_pods_deleted_past_a_budget_of_one_are_flagged() -> None:
    h = _settled()
    view = _view(h)
    pods = {p["metadata"]["name"]: p for p in view.pods}
    d = Decision(view=view, actions=(delete_of(pods["foo-2"]), delete_of(pods["foo-1"])))
    assert disruption_budget(d) == ["foo-1 deleted past PodDisruptionBudget foo-pdb: The disruption budget foo-pdb "
                                    "needs 2 healthy pods and has 2 currently"]
    assert "disruption-budget" in TRANSITION_RULES


def test_the_controllers_own_decision_keeps_the_budget_and_survives_a_decision_log() -> None:
    h = _settled()
    h.set_image("nginx:2")
    view = _view(h)
    plan = reconcile(view)
    assert len([a for a in plan.actions if type(a).__name__ == "DeletePod"]) == 1
    assert disruption_budget(Decision(view=view, actions=plan.actions)) == []
    _, decoded = decode(json.loads(json.dumps(encode(view, plan.actions, controller="sts", quorum=False))))
    assert decoded.view.budgets and decoded.view.budget_pods
    pods = {p["metadata"]["name"]: p for p in view.pods}
    greedy = Decision(view=decoded.view, actions=(delete_of(pods["foo-2"]), delete_of(pods["foo-0"])))
    assert disruption_budget(greedy)


def test_failed_pods_and_quorum_decisions_are_not_judged() -> None:
    h = _settled()
    h.set_status("foo-1", phase="Failed")
    h.set_status("foo-2", phase="Failed")
    view = _view(h)
    pods = {p["metadata"]["name"]: p for p in view.pods}
    assert disruption_budget(Decision(view=view, actions=(delete_of(pods["foo-2"]), delete_of(pods["foo-1"])))) == []
    h2 = _settled()
    view2 = _view(h2)
    pods2 = {p["metadata"]["name"]: p for p in view2.pods}
    both = (delete_of(pods2["foo-2"]), delete_of(pods2["foo-1"]))
    assert disruption_budget(Decision(view=view2, actions=both, quorum=True)) == []
