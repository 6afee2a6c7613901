"""Perturbations of the controller's view, each a switch. The design tolerates a crash between any two actions of
a plan (a fresh controller decides again from the store) and bursts of transitions it never saw; a stale view can
spend the budget twice — upstream's answer since 1.36 is a consistency check before acting."""

from __future__ import annotations

import pytest
from explore_sets import STRATEGIES, found, manifest, run


@pytest.mark.parametrize("name", ["RollingUpdate", "Recreate", "EnforcedRollingUpdate"])
def test_a_crash_between_actions_and_unseen_bursts_are_tolerated(name: str) -> None:
    strategy, _ = STRATEGIES[name]
    result = run(manifest(strategy, "OrderedReady", replicas=2), replicas=2, template_changes=1,
                 perturb="crash,burst")
    assert result.complete
    assert found(result) == {}


def test_the_crash_switch_adds_transitions_that_cut_plans_short() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    plain = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1)
    crashing = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, perturb="crash")
    assert crashing.transitions > plain.transitions
    assert found(crashing) == {}


def test_a_stale_view_can_spend_the_budget_twice() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, perturb="stale,burst")
    budget = next(v for v in result.violations if v.invariant == "budget")
    words = [m.words() for m in budget.trace]
    # web-0 turned Ready after the template changed; the controller's view still has it not Ready, so it deletes
    # web-0 as an unavailable outdated pod (free under Parallel) next to web-1, which the budget already covers.
    assert words[-1] == ("statefulset-controller: reconciles on a stale view "
                         "(misses the last change; deletes web-0, deletes web-1)")
    assert "kubelet: readiness passes web-0" in words
    assert "ordinals [0, 1] now unavailable, budget 1" in budget.message


def test_without_the_stale_switch_the_same_bounds_hold() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, perturb="burst")
    assert found(result) == {}
