"""The simulator, ``up`` and the operator reconcile sets with the one class of runtime/reconciler.py; the
operator's differences are its hooks (operator/sets.py)."""

from __future__ import annotations

from test_runtime_operator import Lab

from rollwise.operator.sets import CacheConsistency, OperatorWrites
from rollwise.runtime.reconciler import SetController
from rollwise.runtime.set_reads import CacheReads, StoreReads
from rollwise.scenario.scenario import Scenario
from rollwise.sim.loop import Simulation


def test_the_simulator_and_the_operator_reconcile_sets_with_the_one_class_and_differ_in_hooks_only() -> None:
    sim = Simulation(Scenario(name="empty"))
    op, _ = Lab().operator("op", 1)
    assert type(sim.controller) is SetController and [type(s) for s in op.sets] == [SetController]
    assert isinstance(sim.controller.reads, StoreReads) and sim.controller.consistency is None
    (ctl,) = op.sets
    assert isinstance(ctl.reads, CacheReads) and not ctl.reads.sees_own_writes
    assert isinstance(ctl.writes, OperatorWrites) and isinstance(ctl.consistency, CacheConsistency)
