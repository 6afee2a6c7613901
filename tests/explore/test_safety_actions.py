"""The explorer with issue 28's user actions: a pause toggled and a PodDisruptionBudget created at any point of a
rollout, under every strategy, checked against every invariant (the disruption-budget rule included) and liveness
(a paused set owes its pods' presence and availability, not the rollout)."""

from __future__ import annotations

import dataclasses

import pytest
from explore_sets import STRATEGIES, found, manifest, run
from tiers import sweep

from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView


@pytest.mark.parametrize("name", sweep(
    ((n,) for n in ("RollingUpdate", "RollingUpdate-maxUnavailable-2", "OnDelete", "EnforcedRollingUpdate",
                    "QuorumAware", "Recreate")),
    fast={("RollingUpdate",), ("Recreate",)}))
def test_pause_and_a_budget_as_user_actions_keep_every_invariant(name: str) -> None:
    strategy, annotations = STRATEGIES[name]
    safety = "pause" if name == "Recreate" else "pause,pdb"
    result = run(manifest(strategy, "Parallel", annotations=annotations, replicas=2), replicas=2,
                 template_changes=1, user_actions=1, safety=safety)
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}


def test_recreate_under_a_budget_that_needs_availability_is_reported_stuck() -> None:
    """Recreate takes every old pod down before it creates one; a budget that keeps one available lets one go and
    no more: the rollout waits for ever (and its condition names the budget). The explorer says so."""
    strategy, _ = STRATEGIES["Recreate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, user_actions=1,
                 safety="pdb")
    assert set(found(result)) == {"liveness"}
    violation = next(v for v in result.violations if v.invariant == "liveness")
    assert any(m.kind == "creates a PodDisruptionBudget" for m in violation.trace)


def _blind(view: SetView) -> Plan:
    """The real controller, blind to PodDisruptionBudgets (as upstream's is)."""
    return reconcile(dataclasses.replace(view, budgets=(), budget_pods=()))


def test_a_controller_blind_to_budgets_is_caught_by_the_disruption_budget_invariant() -> None:
    strategy, _ = STRATEGIES["RollingUpdate-maxUnavailable-2"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, user_actions=1,
                 safety="pdb", decide=_blind)
    assert "disruption-budget" in found(result)
    assert "deleted past PodDisruptionBudget web" in found(result)["disruption-budget"]
