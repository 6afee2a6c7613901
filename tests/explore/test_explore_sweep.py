"""Every strategy x podManagementPolicy, with and without its parameter block, at 2 and 3 replicas, clean at the
explorer's default bounds (one template change, one fault, one user action): issue 23's sweep, run in CI.

Cases that the API server stores alike explore the same state space, so each distinct stored set is explored once:
an EnforcedRollingUpdate set without its block is defaulted to ``enforcedRollingUpdate: {}`` (seed 003), exactly the
set with an empty block. ``test_the_sweep_explores_each_stored_set_once`` pins that only such cases share a run.

Cost: 28 explorations; a 2-replica one is ~3,000 states, a 3-replica one 4,500 to 28,500 (the explorer merges
states alike but for a condition's message or a spent budget: half of what it explored before). The 3-replica cases (up
to 58,461 states, the quorum model's under Parallel) run in ``make test-slow``, which CI runs after the suite."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from explore_sets import QUORUM, found, manifest, run
from tiers import sweep

from rollwise.api.defaults import apply_defaults
from rollwise.api.features import FeatureGates
from rollwise.explore import Exploration

SWEEP: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "RollingUpdate-block": ({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, {}),
    "RollingUpdate-no-block": ({"type": "RollingUpdate"}, {}),
    "RollingUpdate-maxUnavailable-2": ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}, {}),
    "EnforcedRollingUpdate-block": ({"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {}}, {}),
    "EnforcedRollingUpdate-no-block": ({"type": "EnforcedRollingUpdate"}, {}),
    "OnDelete": ({"type": "OnDelete"}, {}),
    "Recreate": ({"type": "Recreate"}, {}),
    "QuorumAware": ({"type": "OnDelete"}, QUORUM),
}
POLICIES = ("OrderedReady", "Parallel")
REPLICAS = (2, 3)


def _stored(name: str, policy: str, replicas: int) -> str:
    strategy, annotations = SWEEP[name]
    obj = apply_defaults(manifest(strategy, policy, annotations=annotations, replicas=replicas), gates=FeatureGates())
    return json.dumps(obj, sort_keys=True)


@cache
def _explored(stored: str, replicas: int) -> Exploration:
    return run(json.loads(stored), replicas=replicas, template_changes=1, faults=1, user_actions=1)


FAST = {("RollingUpdate-block", "OrderedReady", 2), ("Recreate", "Parallel", 2)}
"""The rows ``make test`` runs (tests/support/tiers.py). The 3-replica cases take 10 to 170 s each, and the other
2-replica ones 2 to 12 s; ``make test-slow`` runs every row, and CI runs it after ``make test``."""

CASES = sweep(((n, p, r) for n in SWEEP for p in POLICIES for r in REPLICAS), fast=FAST)


@pytest.mark.parametrize(("name", "policy", "replicas"), CASES)
def test_every_strategy_is_clean_at_the_default_bounds(name: str, policy: str, replicas: int) -> None:
    result = _explored(_stored(name, policy, replicas), replicas)
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}


def test_the_sweep_explores_each_stored_set_once() -> None:
    shared = {}
    for name in SWEEP:
        shared.setdefault(_stored(name, "Parallel", 3), []).append(name)
    assert sorted(names for names in shared.values() if len(names) > 1) == [
        ["EnforcedRollingUpdate-block", "EnforcedRollingUpdate-no-block"]]
