"""The explorer with a pre-delete hook as a user action (--safety-actions hook): the hook added or removed at any
point of a rollout, the application releasing each marked pod's hook as a move of its own; every invariant holds
(the pre-delete-hook rule among them) and every rollout completes; a controller blind to hooks is caught."""

from __future__ import annotations

import dataclasses

import pytest
from explore_sets import STRATEGIES, found, manifest, run

from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.explore.environment import RELEASES_HOOK


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
@pytest.mark.parametrize("name", ["RollingUpdate", "RollingUpdate-maxUnavailable-2", "OnDelete",
                                  "EnforcedRollingUpdate", "Recreate"])
def test_a_hook_as_a_user_action_keeps_every_invariant_and_every_rollout_completes(name: str, policy: str) -> None:
    strategy, annotations = STRATEGIES[name]
    result = run(manifest(strategy, policy, annotations=annotations, replicas=2), replicas=2,
                 template_changes=1, user_actions=1, safety="hook")
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}


def test_hooks_with_pause_and_a_budget_together_keep_every_invariant() -> None:
    strategy, _ = STRATEGIES["RollingUpdate-maxUnavailable-2"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, user_actions=2,
                 safety="pause,pdb,hook")
    assert result.complete
    assert found(result) == {}


def _blind(view: SetView) -> Plan:
    """The real controller, blind to pre-delete hooks (as upstream's is)."""
    spec = {k: v for k, v in view.set["spec"].items() if k != "lifecycle"}
    return reconcile(dataclasses.replace(view, set={**view.set, "spec": spec}))


def test_a_controller_blind_to_hooks_is_caught_by_the_pre_delete_hook_invariant() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, user_actions=1,
                 safety="hook", decide=_blind)
    assert "pre-delete-hook" in found(result)
    assert "deleted while it still carries its pre-delete hook (label example.com/drain=pending)" in \
        found(result)["pre-delete-hook"]


def test_the_release_is_a_move_of_the_application() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, user_actions=1,
                 safety="hook", decide=_blind)
    violation = next(v for v in result.violations if v.invariant == "pre-delete-hook")
    assert any(m.kind == "adds a pre-delete hook" for m in violation.trace)
    assert not any(m.kind == RELEASES_HOOK for m in violation.trace)
