"""The simulator wakes its controllers through the one change dispatcher (runtime/dispatch.py), as ``up`` and the
operator do: the AnalysisRun controller runs on the one controller host, woken by the registration row's rule, and
a run the store refuses to update is looked at again a second later."""

from __future__ import annotations

from typing import Any

from rollwise.api.errors import Conflict
from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import ANALYSIS_RUN
from rollwise.runtime.host import ControllerHost
from rollwise.scenario.scenario import Scenario
from rollwise.sim import Simulation

RUN: Obj = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
            "metadata": {"name": "r", "namespace": "default"},
            "spec": {"metrics": [{"name": "m", "provider": {"web": {"url": "http://x", "jsonPath": "{$.v}"}}}]}}


def _change(obj: Obj, type_: Any = "ADDED") -> Change:
    return Change(type=type_, kind="AnalysisRun", namespace="default", name="r", obj=obj, old=None, actor="user",
                  at=0.0, group="apps.rollwise.dev")


def test_an_analysis_runs_change_wakes_the_simulators_run_controller_on_the_one_host() -> None:
    sim = Simulation(Scenario(name="empty"))
    assert isinstance(sim.analyses.host, ControllerHost)
    sim.changes.dispatch(_change(RUN))
    assert (ANALYSIS_RUN, "default", "r") in sim.analyses.host.queue


def test_a_refused_run_write_is_tried_again_a_second_later() -> None:
    sim = Simulation(Scenario(name="empty"))
    attempts: list[float] = []

    def refuse(obj: Obj, **_: Any) -> Obj:
        attempts.append(sim.clock.now)
        raise Conflict("the run changed")

    sim.cluster.update_status = refuse  # type: ignore[method-assign]
    sim.cluster.create(RUN, actor="user")
    sim.drain()  # the feed's change reaches the dispatcher, which wakes the run
    while (t := sim.engine.next_time()) is not None and t <= 2.5:
        sim.engine.run_instant(sim.drain)
    assert attempts == [0.0, 1.0, 2.0]
