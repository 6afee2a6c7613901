"""The explorer with reserved ordinals (``spec.reserveOrdinals``): sets that reserve an ordinal, a user who
reserves or clears one mid-rollout, every strategy, every invariant (wanted-ordinals among them: a controller move
creates pods only at the ordinals ``api.identity.ordinal_range`` wants) and liveness (a complete rollout has no
pod at a reserved ordinal); a controller that ignores the list is caught."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from explore_sets import STRATEGIES, found, manifest, run
from tiers import sweep

from rollwise.api.features import FeatureGates
from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.explore import Bounds, Move, initial_node
from rollwise.explore.replay import replay_shows, trace_to_scenario
from rollwise.scenario.scenario import parse_scenario


def _reserving(obj: dict[str, Any], reserve: list[int]) -> dict[str, Any]:
    obj["spec"]["reserveOrdinals"] = reserve
    return obj


@pytest.mark.parametrize(("name", "policy"), sweep(
    ((n, p) for n in ("RollingUpdate", "RollingUpdate-maxUnavailable-2", "OnDelete", "EnforcedRollingUpdate",
                      "Recreate", "QuorumAware") for p in ("OrderedReady", "Parallel")),
    fast={("RollingUpdate", "OrderedReady"), ("Recreate", "Parallel")}))
def test_every_path_with_a_reserved_ordinal_keeps_every_invariant(name: str, policy: str) -> None:
    strategy, annotations = STRATEGIES[name]
    obj = _reserving(manifest(strategy, policy, annotations=annotations, replicas=2), [1])
    result = run(obj, replicas=2, template_changes=1, user_actions=1)
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}
    assert "wanted-ordinals" in result.invariants


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_reserving_and_clearing_an_ordinal_mid_rollout_keeps_every_invariant(policy: str) -> None:
    strategy, _ = STRATEGIES["RollingUpdate-maxUnavailable-2"]
    result = run(manifest(strategy, policy, replicas=2), replicas=2, template_changes=1, user_actions=1,
                 safety="reserve,pdb")
    assert result.complete and found(result) == {}


def _blind(view: SetView) -> Plan:
    """The real controller, blind to reserved ordinals."""
    spec = {k: v for k, v in view.set["spec"].items() if k != "reserveOrdinals"}
    return reconcile(dataclasses.replace(view, set={**view.set, "spec": spec}, census=None))


def test_a_controller_blind_to_reserved_ordinals_is_caught() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    obj = _reserving(manifest(strategy, "Parallel", replicas=2), [1])
    problems = found(run(obj, replicas=2, template_changes=0, user_actions=0, decide=_blind))
    assert "whose ordinal the set does not want" in problems.get("wanted-ordinals", ""), problems


def test_a_reserve_move_replays_as_a_patch_step_and_its_claims_are_not_counted_lost() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    obj = manifest(strategy, "Parallel", replicas=2)
    bounds = Bounds(replicas=2)
    facts = initial_node(obj, gates=FeatureGates(), bounds=bounds).facts
    trace = [Move(actor="statefulset-controller", kind="reconciles", created=("web-0", "web-1")),
             Move(actor="kubelet", kind="container starts", target="web-1"),
             Move(actor="kubelet", kind="readiness passes", target="web-1"),
             Move(actor="user", kind="reserves ordinals", target="web", detail="[1]")]
    doc = trace_to_scenario(obj, facts, bounds, trace, invariant="claims", message="m")
    reserve = {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {"reserveOrdinals": [1]}}}}
    assert reserve in doc["steps"]
    parse_scenario(doc)
    assert replay_shows(doc, "claims", facts) is False, "web-1's claim goes under whenScaled Delete: not lost"
