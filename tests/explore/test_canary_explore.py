"""The explorer with canary steps: promote (one step, or --full) is a user action at any state where a step is
left, alongside template changes, scaling and faults; every invariant (the canary-step rule, the partition read
from the step, the budget, liveness) holds at the default bounds, and a controller that moves past ``pause: {}``
by itself is caught."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from explore_sets import found, manifest, run
from tiers import sweep

from rollwise.api.abort import ABORT_FIELDS
from rollwise.controllers.plan import DeletePod, Plan, WriteStatus
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView

PAUSE = [{"replicas": 1}, {"pause": {}}]
ANALYSIS = [{"replicas": 1}, {"analysis": {"templates": [{"templateName": "ok"}]}}, {"replicas": "100%"}]


def _canary(steps: list[dict[str, Any]], replicas: int = 3) -> dict[str, Any]:
    return manifest({"type": "RollingUpdate", "rollingUpdate": {"steps": steps}}, "Parallel", replicas=replicas)


@pytest.mark.parametrize(("name", "replicas"), sweep([("pause", 2), ("pause", 3), ("analysis", 3)],
                                                    fast={("pause", 2)}))
def test_promote_as_a_user_action_keeps_every_invariant_at_the_default_bounds(name: str, replicas: int) -> None:
    """Three replicas are the default bounds (tens of CPU seconds: ``make test-slow``); two keep the same moves in
    ``make test``."""
    promoted: list[int] = []

    def decide(view: SetView) -> Plan:
        status = view.set.get("status") or {}
        if status.get("currentRevision") != status.get("updateRevision") and status.get("currentStepIndex", 0) >= 2:
            promoted.append(1)  # only a promote moves a canary past its pause or analysis step
        return reconcile(view)

    result = run(_canary(PAUSE if name == "pause" else ANALYSIS, replicas), replicas=replicas, template_changes=1,
                 faults=1, user_actions=1, decide=decide)
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}
    assert promoted, "the explorer promoted a held canary somewhere"


def _impatient(view: SetView) -> Plan:
    """The real controller, reading ``pause: {}`` as a pause of no time (a canary that does not wait)."""
    sts = copy.deepcopy(view.set)
    for step in sts["spec"]["updateStrategy"]["rollingUpdate"]["steps"]:
        if step.get("pause") == {}:
            step["pause"] = {"duration": 0}
    return reconcile(dataclasses.replace(view, set=sts))


def test_a_controller_that_does_not_wait_for_promote_is_caught_by_the_canary_step_rule() -> None:
    result = run(_canary(PAUSE), replicas=2, template_changes=1, faults=0, user_actions=0, decide=_impatient)
    assert found(result).get("canary-step") == "moved past step 2 (pause until promoted) without a promote"


@pytest.mark.slow  # over a minute of CPU; the analysis-verdict exploration below aborts within make test
def test_abort_as_a_user_action_keeps_every_invariant_and_ends_with_every_pod_at_the_stable_revision() -> None:
    aborted_deletes: list[str] = []

    def decide(view: SetView) -> Plan:
        plan = reconcile(view)
        if (view.set.get("status") or {}).get("abort") is True:
            aborted_deletes.extend(a.name for a in plan.actions if isinstance(a, DeletePod))
        return plan

    result = run(_canary([{"replicas": 2}, {"pause": {}}]), replicas=3, template_changes=1, faults=1,
                 user_actions=1, decide=decide)
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}  # the budget, PDBs, hooks, claims, liveness (back at the stable revision) included
    assert aborted_deletes, "the explorer aborted a canary somewhere and the controller took pods back"


def _ignores_abort(view: SetView) -> Plan:
    """The real controller, blind to ``status.abort`` but keeping it in what it writes (an abort that is recorded
    and never carried out)."""
    old = view.set.get("status") or {}
    kept = {k: old[k] for k in ABORT_FIELDS if k in old}
    status = {k: v for k, v in old.items() if k not in kept}
    plan = reconcile(dataclasses.replace(view, set={**view.set, "status": status}))
    actions = tuple(dataclasses.replace(a, status={**a.status, **kept}) if isinstance(a, WriteStatus) else a
                    for a in plan.actions)
    return dataclasses.replace(plan, actions=actions)


def test_a_controller_that_ignores_an_abort_is_caught() -> None:
    result = run(_canary([{"replicas": 1}, {"pause": {}}]), replicas=2, template_changes=1, faults=0,
                 user_actions=1, decide=_ignores_abort)
    assert "liveness" in found(result)


def test_analysis_verdicts_as_moves_keep_every_invariant_through_the_abort_a_failed_run_makes() -> None:
    verdicts: dict[str, list[str]] = {"aborts": [], "passes": []}

    def decide(view: SetView) -> Plan:
        plan = reconcile(view)
        status = view.set.get("status") or {}
        if status.get("abort") is True and "analysis run" in str(status.get("abortMessage")):
            verdicts["aborts"].extend(a.name for a in plan.actions if isinstance(a, DeletePod))
        if status.get("currentStepIndex") == 1 and any(
                isinstance(a, DeletePod) and a.name == "web-0" for a in plan.actions):
            verdicts["passes"].append("web-0")
        return plan

    result = run(_canary([{"replicas": 1}, {"analysis": {"templates": [{"templateName": "ok"}]}}]), replicas=2,
                 template_changes=1, faults=0, user_actions=1, decide=decide)
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}  # the budget, claims, canary-step, liveness (back at the stable revision) included
    assert verdicts["aborts"], "a Failed run aborted a canary somewhere and the controller took its pod back"
    assert verdicts["passes"], "a Successful run let the rest of the pods follow somewhere"


def _no_wait_for_analysis(view: SetView) -> Plan:
    """The real controller, reading every analysis step as a pause of no time (a canary that does not wait for its
    analysis)."""
    sts = copy.deepcopy(view.set)
    steps = sts["spec"]["updateStrategy"]["rollingUpdate"]["steps"]
    sts["spec"]["updateStrategy"]["rollingUpdate"]["steps"] = [
        {"pause": {"duration": 0}} if "analysis" in step else step for step in steps]
    return reconcile(dataclasses.replace(view, set=sts))


def test_a_controller_that_does_not_wait_for_its_analysis_is_caught_by_the_canary_step_rule() -> None:
    result = run(_canary([{"replicas": 1}, {"analysis": {"templates": [{"templateName": "ok"}]}}]), replicas=2,
                 template_changes=1, faults=0, user_actions=0, decide=_no_wait_for_analysis)
    assert "not Successful" in found(result).get("canary-step", "")
