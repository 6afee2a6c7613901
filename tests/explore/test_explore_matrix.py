"""Every strategy x podManagementPolicy at 3 replicas, exhaustively within small bounds: the set is created, its
template changes once (to a good or a broken image), and every interleaving of pod progress and reconciles is
checked against every invariant, liveness included. Known violations stay visible as strict xfails naming the
invariant (tests/explore/test_known_violations.py has their smallest traces)."""

from __future__ import annotations

import pytest
from explore_sets import POLICIES, STRATEGIES, found, manifest, run
from tiers import sweep

KNOWN: dict[tuple[str, str], str] = {}
FAST = {("RollingUpdate", "OrderedReady"), ("Recreate", "Parallel"), ("QuorumAware", "OrderedReady")}
CASES = [
    pytest.param(name, policy, marks=pytest.mark.xfail(strict=True, reason=f"{KNOWN[(name, policy)]} violated"))
    if (name, policy) in KNOWN else case
    for name in STRATEGIES for policy in POLICIES for case in sweep([(name, policy)], fast=FAST)
]


@pytest.mark.parametrize(("name", "policy"), CASES)
def test_every_reachable_state_keeps_the_invariants(name: str, policy: str) -> None:
    strategy, annotations = STRATEGIES[name]
    result = run(manifest(strategy, policy, annotations=annotations), replicas=3, template_changes=1)
    assert result.complete, "the bounded state space must be exhausted"
    assert result.states > 50
    assert found(result) == {}


@pytest.mark.parametrize("policy", POLICIES)
def test_a_broken_template_fixed_later_completes_under_rolling_update(policy: str) -> None:
    # Two template changes: broken, then good again (or good twice). Liveness is owed once the template is good.
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, policy), replicas=2, template_changes=2)
    assert result.complete
    assert found(result) == {}


def test_faults_keep_the_invariants_under_recreate() -> None:
    strategy, _ = STRATEGIES["Recreate"]
    result = run(manifest(strategy, "Parallel"), replicas=2, template_changes=1, faults=1)
    assert result.complete
    assert found(result) == {}
