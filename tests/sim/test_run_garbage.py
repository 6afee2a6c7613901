"""A simulated run makes no reference cycles, which is what lets it run with the cycle collector off
(sim/loop.py ``_no_cycle_collections``): every object it drops is freed by reference counting.

Every bundled scenario runs, under each strategy that changes which code paths run (faults, rejected steps,
quorum models, Recreate's holds), with the simulation still held; a full collection afterwards must find nothing.
"""

from __future__ import annotations

import gc
import types
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


def _ours(obj: object) -> bool:
    """An object of this project's code: an instance of its classes, or one of its functions, methods or frames."""
    if isinstance(obj, types.FrameType):
        return "rollwise" in obj.f_code.co_filename
    if isinstance(obj, types.MethodType):
        return _ours(obj.__func__) or _ours(obj.__self__)
    module = getattr(obj, "__module__", None) if isinstance(obj, types.FunctionType) else type(obj).__module__
    return isinstance(module, str) and module.startswith("rollwise")


def cyclic_garbage_of_ours() -> list[str]:
    """What a full collection finds in cycles that this project's code made. Only that: the test process has other
    threads (pytest-xdist's channel to its controller), whose own cyclic garbage may come due at any instant."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return sorted({type(o).__qualname__ for o in gc.garbage if _ours(o)})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
def test_a_run_leaves_no_cyclic_garbage(path: Path) -> None:
    for strategy in STRATEGIES:
        gc.collect()  # the previous simulation: a driver's graph is cyclic (callbacks hold it), dropped as a whole
        simulation = Simulation(load_with_overrides(str(path), strategy=strategy))
        simulation.run()
        assert cyclic_garbage_of_ours() == [], f"{path.stem} under {strategy or 'its own strategy'} made cycles"
        del simulation


def test_the_garbage_check_finds_a_cycle_made_by_this_project_s_code() -> None:
    gc.collect()
    first, second = Simulation.__new__(Simulation), Simulation.__new__(Simulation)
    first.__dict__["peer"], second.__dict__["peer"] = second, first
    del first, second
    assert cyclic_garbage_of_ours() == ["Simulation"]


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
