"""``up``'s AnalysisRun controller (``up --controllers analysis``, on by default): ``runtime.analysis.reconcile_run``
for each run, on the driver's loop, over the in-process store.

A run is reconciled when it changes, when a template of its namespace changes while it waits to resolve, and at
its requeue; one reconcile of a run at a time (a change meanwhile runs it again after). Its writes go through the
store and are delivered with ``pump``, as the set controllers' are. While an operator that runs ``analysis`` leads
(``local/standdown.py``), the runs of its namespaces are left to it; the driver wakes every run when it stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from rollwise.api.analysis import COMPLETED_PHASES
from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import ANALYSIS_RUN, ANALYSIS_TEMPLATE
from rollwise.runtime.analysis import reconcile_run
from rollwise.runtime.recorder import EventRecorder
from rollwise.runtime.registrations import ANALYSIS

__all__ = ["LocalAnalysis"]

log = logging.getLogger("rollwise.wall")

Key = tuple[str, str]
_RETRY = 1.0
"""Seconds before a reconcile the API refused (a stale read: Conflict) runs again."""


class _StoreWrites:
    """The run's writes through the store, each delivered to the watchers at once."""

    __slots__ = ("cluster", "pump")

    def __init__(self, cluster: Cluster, pump: Callable[[], None]) -> None:
        self.cluster = cluster
        self.pump = pump

    async def update(self, obj: Obj) -> Obj:
        out = self.cluster.update(obj, actor=ANALYSIS.actor)
        self.pump()
        return out

    async def update_status(self, obj: Obj) -> Obj:
        out = self.cluster.update_status(obj, actor=ANALYSIS.actor)
        self.pump()
        return out


class LocalAnalysis:
    def __init__(self, cluster: Cluster, *, loop: asyncio.AbstractEventLoop, clock: Callable[[], float],
                 recorder: EventRecorder | None, pump: Callable[[], None],
                 stands_down: Callable[[Key], bool]) -> None:
        self.cluster = cluster
        self.loop = loop
        self.clock = clock
        self.recorder = recorder
        self.writes = _StoreWrites(cluster, pump)
        self.stands_down = stands_down
        self._timers: dict[Key, asyncio.TimerHandle] = {}
        self._running: set[Key] = set()
        self._again: set[Key] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False

    def on_change(self, ch: Change) -> None:
        if ch.group != ANALYSIS_RUN.group:
            return
        if ch.kind == ANALYSIS_RUN.kind and ch.type != "DELETED":
            self.wake((ch.namespace, ch.name))
        elif ch.kind == ANALYSIS_TEMPLATE.kind:
            for run in self.cluster.list(ANALYSIS_RUN, ch.namespace):
                if not (run.get("spec") or {}).get("metrics") and (run.get("status") or {}).get("phase") \
                        not in COMPLETED_PHASES:
                    self.wake((namespace_of(run), name_of(run)))

    def wake_all(self) -> None:
        for run in self.cluster.list(ANALYSIS_RUN):
            self.wake((namespace_of(run), name_of(run)))

    def wake(self, key: Key, after: float = 0.0) -> None:
        """Reconcile ``key`` in ``after`` seconds (sooner if it was already due sooner)."""
        if self._stopped:
            return
        due = self.loop.time() + after
        timer = self._timers.get(key)
        if timer is not None:
            if timer.when() <= due:
                return
            timer.cancel()
        self._timers[key] = self.loop.call_at(due, self._start, key)

    def stop(self) -> None:
        self._stopped = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for task in self._tasks:
            task.cancel()

    def _start(self, key: Key) -> None:
        self._timers.pop(key, None)
        if key in self._running:
            self._again.add(key)
            return
        self._running.add(key)
        task = self.loop.create_task(self._reconcile(key), name=f"analysis-{key[0]}/{key[1]}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reconcile(self, key: Key) -> None:
        requeue: float | None = None
        try:
            run = self.cluster.get(ANALYSIS_RUN, *key)
            if self.stands_down(key):
                return
            templates = {name_of(t): t for t in self.cluster.list(ANALYSIS_TEMPLATE, key[0])}
            outcome = await reconcile_run(run, templates, writes=self.writes, now=self.clock)
            requeue = outcome.requeue
            if self.recorder is not None:
                for event in outcome.events:
                    self.recorder.record(run, event, ANALYSIS.actor)
        except NotFound:
            return
        except ApiStatusError as err:  # a stale read (Conflict) or a refused write: look again shortly
            log.info("analysis %s/%s: %s; retrying", key[0], key[1], err)
            requeue = _RETRY
        finally:
            self._running.discard(key)
        if key in self._again:
            self._again.discard(key)
            self.wake(key)
        if requeue is not None:
            self.wake(key, requeue)
