"""One reconcile of an AnalysisRun, the same in every driver (``rollwise run``'s ``operator/analysis.py``, ``up``'s
``local/analysis.py``): the pure decision (``controllers/analysis``), then its writes and measurements.

1. ``decide``; a run whose templates are not resolved yet gets its spec written (``spec.metrics``, ``spec.args``)
   and nothing else: the write's own watch event brings the next reconcile;
2. the metrics due are measured together, each provider off the event loop (``asyncio.to_thread``: a GET blocks),
   as Argo measures a run's metrics in parallel goroutines, and folded into the status in the metrics' order;
3. the status is written if it differs from the stored one (a stale read fails on its resourceVersion, and the
   worker retries: a measurement is never recorded twice);
4. the requeue: when time alone makes a metric due (``next_reconcile``), a second at the least.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from rollwise.api.analysis import Measured
from rollwise.api.meta import Obj
from rollwise.controllers.analysis import completion_events, decide, next_reconcile, record
from rollwise.runtime.analysis_providers import DEFAULT_TIMEOUT, measure
from rollwise.runtime.execute import ControllerEvent

__all__ = ["RunOutcome", "RunWrites", "reconcile_run"]


class RunWrites(Protocol):
    """The two writes a reconcile makes."""

    async def update(self, obj: Obj) -> Obj: ...

    async def update_status(self, obj: Obj) -> Obj: ...


@dataclass(frozen=True, slots=True)
class RunOutcome:
    requeue: float | None
    """Seconds until time alone changes something; None: nothing waits on time."""
    events: tuple[ControllerEvent, ...]
    writes: int


Measure = Callable[..., Measured]
MIN_REQUEUE = 1.0


async def reconcile_run(run: Obj, templates: Mapping[str, Mapping[str, Any]], *, writes: RunWrites,
                        now: Callable[[], float], measurer: Measure = measure,
                        timeout: float = DEFAULT_TIMEOUT) -> RunOutcome:
    """Reconcile ``run``; ``templates``: the AnalysisTemplates of its namespace, by name."""
    plan = decide(run, templates, now())
    if plan.spec is not None:
        await writes.update({**run, "spec": plan.spec})
        return RunOutcome(requeue=None, events=(), writes=1)
    stored: dict[str, Any] = dict(run.get("status") or {})
    current: Obj = {**run, "status": plan.status if plan.status is not None else stored}
    events = list(plan.events)
    if plan.measure:
        started = now()
        results = await asyncio.gather(*(asyncio.to_thread(
            measurer, {"name": task.metric, "provider": task.provider}, timeout=timeout) for task in plan.measure))
        before = current["status"]
        for task, measured in zip(plan.measure, results, strict=True):
            current = {**run, "status": record(current, task.metric, measured, now(), started=started)}
        events += completion_events(run, before, current["status"])
    wrote = 0
    if current["status"] != stored:
        current = await writes.update_status(current)
        wrote = 1
    requeue = next_reconcile(current, now())
    # Times are whole seconds: a metric due "now" again (an interval of 0) is looked at a second later.
    return RunOutcome(requeue=None if requeue is None else max(requeue, MIN_REQUEUE),
                      events=tuple(ControllerEvent(event_type=t, reason=r, message=m) for t, r, m in events),
                      writes=wrote)
