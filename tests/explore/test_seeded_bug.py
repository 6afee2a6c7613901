"""A deliberately broken controller is caught: the shortest trace comes first, and its scenario replays the
violation in the simulator (with the same broken controller) and not with the real one."""

from __future__ import annotations

import dataclasses

import pytest
from explore_sets import STRATEGIES, manifest, run

from rollwise.api.features import FeatureGates
from rollwise.api.identity import revision_of
from rollwise.api.meta import name_of, namespace_of, uid_of
from rollwise.controllers.plan import DeletePod, Plan, WriteStatus
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.explore import Bounds, initial_node
from rollwise.explore.replay import replay_shows, trace_to_scenario
from rollwise.runtime import registrations


def greedy(view: SetView) -> Plan:
    """The real controller, except that when it deletes a pod it deletes every other pod of that revision at once,
    whatever maxUnavailable says."""
    plan = reconcile(view)
    deleting = {d.name for d in plan.of_type(DeletePod)}
    outdated = {d.revision for d in plan.of_type(DeletePod)}
    extra = tuple(
        DeletePod(name=name_of(pod), namespace=namespace_of(pod), uid=uid_of(pod), revision=revision_of(pod),
                  reason="greedy")
        for pod in view.pods
        if name_of(pod) not in deleting and revision_of(pod) in outdated
        and not (pod["metadata"].get("deletionTimestamp"))
    )
    return dataclasses.replace(plan, actions=plan.actions + extra)


def test_the_greedy_controller_breaks_the_budget_with_the_shortest_trace() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, decide=greedy)
    budget = next(v for v in result.violations if v.invariant == "budget")
    # The least it takes: web-0 available (it starts and turns Ready; the controller acts whenever it has
    # something to write), the template changes, and the greedy reconcile deletes web-1 (unavailable: free under
    # Parallel) and web-0.
    assert [m.words() for m in budget.trace] == [
        "statefulset-controller: reconciles (creates web-0, creates web-1)",
        "statefulset-controller: reconciles",
        "kubelet: container starts web-0",
        "kubelet: readiness passes web-0",
        "statefulset-controller: reconciles",
        "user: changes the template web (image app:v1-next, good)",
        "statefulset-controller: reconciles (deletes web-0, deletes web-1)",
    ]
    assert "ordinals [0, 1] now unavailable, budget 1" in budget.message


def test_the_real_controller_keeps_the_budget_within_the_same_bounds() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1)
    assert result.violations == []


def test_the_written_scenario_replays_the_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    obj = manifest(strategy, "Parallel", replicas=2)
    bounds = Bounds(replicas=2, template_changes=1, faults=0, user_actions=0)
    start = initial_node(obj, gates=FeatureGates(), bounds=bounds)
    result = run(obj, replicas=2, template_changes=1, decide=greedy)
    budget = next(v for v in result.violations if v.invariant == "budget")
    doc = trace_to_scenario(obj, start.facts, bounds, budget.trace, invariant="budget", message=budget.message)
    assert replay_shows(doc, "budget", start.facts) is False  # the real controller keeps the budget
    greedy_row = dataclasses.replace(registrations.STATEFULSET_ROW, decide=greedy)
    monkeypatch.setattr(registrations, "SET_CONTROLLERS", (greedy_row, registrations.QUORUM))
    assert replay_shows(doc, "budget", start.facts) is True


def miscounting(view: SetView) -> Plan:
    """The real controller, except that it reports one Ready replica more than there are."""
    plan = reconcile(view)
    actions = tuple(
        dataclasses.replace(a, status={**a.status, "readyReplicas": int(a.status.get("readyReplicas", 0)) + 1})
        if isinstance(a, WriteStatus) else a
        for a in plan.actions
    )
    return dataclasses.replace(plan, actions=actions)


def test_a_status_that_disagrees_with_the_pods_is_caught() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "OrderedReady", replicas=2), replicas=2, template_changes=0,
                 decide=miscounting)
    status = next(v for v in result.violations if v.invariant == "status")
    assert "status.readyReplicas is 1, the pods say 0" in status.message


def partition_blind(view: SetView) -> Plan:
    """The real controller deciding as if the partition were 0."""
    sts = view.set
    strategy = {**sts["spec"]["updateStrategy"], "rollingUpdate": {"partition": 0}}
    return reconcile(dataclasses.replace(view, set={**sts, "spec": {**sts["spec"], "updateStrategy": strategy}}))


def test_an_update_below_the_partition_is_caught() -> None:
    obj = manifest({"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}, "Parallel", replicas=2)
    result = run(obj, replicas=2, template_changes=1, decide=partition_blind)
    partition = next(v for v in result.violations if v.invariant == "partition")
    assert partition.message == "deleted web-0 below partition 1"
    assert run(obj, replicas=2, template_changes=1).violations == []
