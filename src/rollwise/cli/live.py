"""``rollwise simulate FILE --live [--speed N]``: a simulated rollout played in the terminal view ``get --watch``
draws on a cluster (the same projection, the same renderer), at N times virtual speed.

The simulator calls back after each virtual instant; the callback waits until the wall clock catches up with
``t / speed`` and redraws. Redraws are capped at about 20 a second, so a fast run does not spend its time drawing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from rollwise.api.meta import Obj, namespace_of
from rollwise.cli.treeview import render_view, view_console
from rollwise.cluster.resources import CONTROLLER_REVISION, LEASE, POD, group_of
from rollwise.drivers.sets import all_sets
from rollwise.drivers.sim import Scenario, Simulation
from rollwise.projection import RolloutView, project

__all__ = ["run_live", "sim_views"]

_MIN_REDRAW_SECONDS = 0.05


def _kind(sts: Obj) -> str:
    return "rsts" if group_of(str(sts.get("apiVersion", ""))) == "apps.rollwise.dev" else "sts"


def _events(sim: Simulation) -> list[Obj]:
    """The controllers' events of the run record, in the shape of v1 Events (the simulator keeps them there, not
    in its store)."""
    out = []
    for ev in sim.recorder.events:
        if ev.get("type") != "Event":
            continue
        kind, _, name = str(ev.get("object", "")).partition("/")
        out.append({"involvedObject": {"kind": kind, "name": name}, "type": ev.get("eventType") or "Normal",
                    "reason": ev.get("reason"), "message": ev.get("message"), "lastTimestamp": ev.get("t")})
    return out


def sim_views(sim: Simulation, now: float) -> list[RolloutView]:
    """The view of every set of the simulated cluster at virtual time ``now``."""
    cluster = sim.cluster
    events = _events(sim)
    views = []
    for sts in all_sets(cluster):
        ns = namespace_of(sts)
        views.append(project(sts, kind=_kind(sts), pods=cluster.list(POD, ns),
                             revisions=cluster.list(CONTROLLER_REVISION, ns), leases=cluster.list(LEASE, ns),
                             events=events, now=now))
    return views


def _frame(sim: Simulation, t: float, speed: float) -> RenderableType:
    parts: list[RenderableType] = [Text(f"{sim.scenario.name}: virtual time {t:.1f} s (x{speed:g})", style="bold")]
    for view in sim_views(sim, t):
        parts += [Text(""), render_view(view)]
    return Group(*parts)


def run_live(scenario: Scenario, *, speed: float, console: Console | None = None,
             clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
             ) -> dict[str, Any]:
    """Run the scenario, drawing each instant no sooner than ``t / speed`` wall seconds after the start; return
    the result document as ``simulate`` does."""
    sim = Simulation(scenario)
    console = console or view_console()
    start = clock()
    last_draw = -_MIN_REDRAW_SECONDS
    with Live(Text(f"{scenario.name}: starting"), console=console, auto_refresh=False, transient=False,
              vertical_overflow="visible") as live:

        def progress(t: float) -> None:
            nonlocal last_draw
            ahead = start + t / speed - clock()
            if ahead > 0:
                sleep(ahead)
            if clock() - last_draw >= _MIN_REDRAW_SECONDS:
                live.update(_frame(sim, t, speed), refresh=True)
                last_draw = clock()

        result = sim.run(progress=progress)
        live.update(_frame(sim, sim.clock.now, speed), refresh=True)
    console.line()
    return result
