"""A progress bar on stderr for runs long enough to notice (TTY only; never mixed into machine output)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from rollwise.sim import Scenario, Simulation

__all__ = ["run_with_progress"]


def run_with_progress(scenario: Scenario, *, label: str = "", enabled: bool = False) -> dict[str, Any]:
    """Run the scenario; with ``enabled``, show virtual time against the run's limit (it ends sooner if idle)."""
    sim = Simulation(scenario)
    if not enabled:
        return sim.run()
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:.0f} s virtual"),
               TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label or scenario.name, total=scenario.limit_seconds)
        return sim.run(progress=lambda t: bar.update(task, completed=t))
