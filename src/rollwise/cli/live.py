"""``rollwise simulate FILE --live [--speed N]``: a simulated rollout played in the terminal view ``get --watch``
draws on a cluster (the same projection, the same renderer), at N times virtual speed.

The simulator calls back after each virtual instant; the callback waits until the wall clock catches up with
``t / speed`` and redraws. Redraws are capped at about 20 a second, and further so that drawing takes at most a
third of the time (a picture of 300 ordinals takes tens of milliseconds), so a fast run does not spend its time
drawing.
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from rollwise.api.meta import Obj, namespace_of
from rollwise.cli.progress import traced
from rollwise.cli.treeview import render_view, view_console
from rollwise.cluster.resources import CONTROLLER_REVISION, LEASE, POD, PROJECT_GROUP, group_of
from rollwise.projection import RolloutView, project
from rollwise.runtime.setkeys import all_sets
from rollwise.runtime.trace import DecisionLog
from rollwise.sim import Scenario, Simulation

__all__ = ["run_live", "sim_views"]

_MIN_REDRAW_SECONDS = 0.05


def _kind(sts: Obj) -> str:
    return "rsts" if group_of(str(sts.get("apiVersion", ""))) == PROJECT_GROUP else "sts"


class _SimEvents:
    """The controllers' events of the run record, in the shape of v1 Events (the simulator keeps them there, not in
    its store), converted as they come and only the newest kept: a long run draws as fast at its end."""

    KEEP = 200

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.seen = 0
        self.events: deque[Obj] = deque(maxlen=self.KEEP)

    def __call__(self) -> list[Obj]:
        record = self.sim.recorder.events
        for ev in itertools.islice(record, self.seen, None):
            if ev.get("type") != "Event":
                continue
            kind, _, name = str(ev.get("object", "")).partition("/")
            self.events.append({"involvedObject": {"kind": kind, "name": name},
                                "type": ev.get("eventType") or "Normal", "reason": ev.get("reason"),
                                "message": ev.get("message"), "lastTimestamp": ev.get("t")})
        self.seen = len(record)
        return list(self.events)


def sim_views(sim: Simulation, now: float, events: Callable[[], list[Obj]] | None = None) -> list[RolloutView]:
    """The view of every set of the simulated cluster at virtual time ``now``."""
    cluster = sim.cluster
    events_now = (events or _SimEvents(sim))()
    views = []
    for sts in all_sets(cluster):
        ns = namespace_of(sts)
        views.append(project(sts, kind=_kind(sts), pods=cluster.list(POD, ns),
                             revisions=cluster.list(CONTROLLER_REVISION, ns), leases=cluster.list(LEASE, ns),
                             events=events_now, now=now))
    return views


def _frame(sim: Simulation, t: float, speed: float, events: Callable[[], list[Obj]]) -> RenderableType:
    parts: list[RenderableType] = [Text(f"{sim.scenario.name}: virtual time {t:.1f} s (x{speed:g})", style="bold")]
    for view in sim_views(sim, t, events):
        parts += [Text(""), render_view(view)]
    return Group(*parts)


def run_live(scenario: Scenario, *, speed: float, console: Console | None = None,
             clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
             trace: DecisionLog | None = None) -> dict[str, Any]:
    """Run the scenario, drawing each instant no sooner than ``t / speed`` wall seconds after the start; return
    the result document as ``simulate`` does (``trace``: log every decision, as ``--trace`` asks)."""
    sim = traced(Simulation(scenario), trace)
    events = _SimEvents(sim)
    console = console or view_console()
    start = clock()
    last_draw, gap = -_MIN_REDRAW_SECONDS, _MIN_REDRAW_SECONDS
    with Live(Text(f"{scenario.name}: starting"), console=console, auto_refresh=False, transient=False,
              vertical_overflow="visible") as live:

        def progress(t: float) -> None:
            nonlocal last_draw, gap
            ahead = start + t / speed - clock()
            if ahead > 0:
                sleep(ahead)
            began = clock()
            if began - last_draw >= gap:
                live.update(_frame(sim, t, speed, events), refresh=True)
                last_draw = clock()
                gap = max(_MIN_REDRAW_SECONDS, 2 * (last_draw - began))

        result = sim.run(progress=progress)
        live.update(_frame(sim, sim.clock.now, speed, events), refresh=True)
    console.line()
    return result
