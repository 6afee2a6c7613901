"""A progress bar on stderr for runs long enough to notice (TTY only; never mixed into machine output)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from rollwise.runtime.actors import QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.runtime.trace import DecisionLog
from rollwise.sim import Scenario, Simulation

__all__ = ["run_with_progress"]


def traced(sim: Simulation, trace: DecisionLog | None) -> Simulation:
    """The simulation, each of its controllers' decisions logged to ``trace`` (``--trace``) when given."""
    if trace is not None:
        sim.observers.append(trace.observer(STATEFULSET_CONTROLLER))
        sim.quorum_observers.append(trace.observer(QUORUM_CONTROLLER))
    return sim


def run_with_progress(scenario: Scenario, *, label: str = "", enabled: bool = False,
                      trace: DecisionLog | None = None) -> dict[str, Any]:
    """Run the scenario; with ``enabled``, show virtual time against the run's limit (it ends sooner if idle);
    with ``trace``, log every decision (``--trace``)."""
    sim = traced(Simulation(scenario), trace)
    if not enabled:
        return sim.run()
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:.0f} s virtual"),
               TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label or scenario.name, total=scenario.limit_seconds)
        return sim.run(progress=lambda t: bar.update(task, completed=t))
