"""The explorer with a pre-delete hook as a user action (--safety-actions hook): the hook added or removed at any
point of a rollout, the application releasing each marked pod's hook as a move of its own; every invariant holds
(the pre-delete-hook rule among them) and every rollout completes; a controller blind to hooks is caught."""

from __future__ import annotations

import dataclasses

import pytest
from explore_sets import STRATEGIES, found, manifest, run
from judged import judge_every_decision
from tiers import sweep

from rollwise.api.features import FeatureGates
from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.explore import Bounds, initial_node
from rollwise.explore.environment import RELEASES_HOOK
from rollwise.explore.replay import trace_to_scenario
from rollwise.sim import Simulation, parse_scenario


@pytest.mark.parametrize(("name", "policy"), sweep(
    ((n, p) for n in ("RollingUpdate", "RollingUpdate-maxUnavailable-2", "OnDelete", "EnforcedRollingUpdate",
                      "Recreate") for p in ("OrderedReady", "Parallel")),
    fast={("RollingUpdate", "OrderedReady"), ("Recreate", "Parallel")}))
def test_a_hook_as_a_user_action_keeps_every_invariant_and_every_rollout_completes(name: str, policy: str) -> None:
    strategy, annotations = STRATEGIES[name]
    result = run(manifest(strategy, policy, annotations=annotations, replicas=2), replicas=2,
                 template_changes=1, user_actions=1, safety="hook")
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}


@pytest.mark.slow  # the widest of these explorations: hooks, pause and a budget at once
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


def test_a_hook_trace_becomes_a_scenario_the_simulator_accepts() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    obj = manifest(strategy, "Parallel", replicas=2)
    bounds = Bounds(replicas=2, template_changes=1, user_actions=1, safety_actions=frozenset({"hook"}))
    result = run(obj, replicas=2, template_changes=1, user_actions=1, safety="hook", decide=_blind)
    violation = next(v for v in result.violations if v.invariant == "pre-delete-hook")
    facts = initial_node(obj, gates=FeatureGates(), bounds=bounds).facts
    doc = trace_to_scenario(obj, facts, bounds, violation.trace, invariant=violation.invariant,
                            message=violation.message)
    template = doc["objects"][0]["spec"]["template"]
    assert template["metadata"]["labels"]["example.com/drain"] == "pending"
    assert {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {"lifecycle": {"preDelete": {
        "labelsHandler": {"example.com/drain": "pending"}}}}}}} in doc["steps"]
    sim = Simulation(parse_scenario(doc))
    problems = judge_every_decision(sim)
    replayed = sim.run()
    # The real controller marks the pods and waits: nothing in the trace releases a hook, so nothing goes.
    assert not problems
    assert any(e.get("reason") == "PreparingDelete" for e in replayed["events"])
    assert replayed["summary"]["web"]["completed"] is False
