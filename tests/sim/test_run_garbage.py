"""A simulated run makes no reference cycles, which is what lets it run with the cycle collector off
(sim/loop.py ``_no_cycle_collections``): every object it drops is freed by reference counting.

Every bundled scenario runs, under each strategy that changes which code paths run (faults, rejected steps,
quorum models, Recreate's holds), with the simulation still held; a full collection afterwards must find nothing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from bundled import SCENARIO_FILES

from rollwise.cli.options import load_with_overrides
from rollwise.sim.loop import Simulation

STRATEGIES = (None, "Recreate", "EnforcedRollingUpdate", "QuorumAware")


@pytest.fixture(scope="module", autouse=True)
def _older_objects_frozen() -> Iterator[None]:
    """What the process held before these tests goes to the permanent generation, so a full collection here scans
    only what the runs made (after the whole suite, the heap is large enough for each to take half a second)."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
def test_a_run_leaves_no_cyclic_garbage(path: Path) -> None:
    for strategy in STRATEGIES:
        gc.collect()  # the previous simulation: a driver's graph is cyclic (callbacks hold it), dropped as a whole
        simulation = Simulation(load_with_overrides(str(path), strategy=strategy))
        simulation.run()
        assert gc.collect() == 0, f"{path.stem} under {strategy or 'its own strategy'} made reference cycles"
        del simulation


def test_a_run_gives_the_collector_back_as_it_found_it() -> None:
    path = SCENARIO_FILES[0]
    gc.enable()
    Simulation(load_with_overrides(str(path))).run()
    assert gc.isenabled()
    gc.disable()
    try:
        Simulation(load_with_overrides(str(path))).run()
        assert not gc.isenabled()
    finally:
        gc.enable()
