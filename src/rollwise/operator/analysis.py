"""The operator's AnalysisRun controller (``rollwise run --controllers analysis``): informers on AnalysisRuns and
AnalysisTemplates, a work queue of runs, and ``runtime.analysis.reconcile_run`` for each, behind the leader fence.

Which change wakes which run is the registration row's rule (``runtime/wakes.runs_to_wake``), the same as in
``up``: a run is woken by its own changes (created, its spec resolved, its status written elsewhere) and by its
requeue; a template's change wakes the runs of its namespace that have not resolved their templates yet (a run
created before its template: Argo resolves at creation and fails, rollwise waits for the first reconcile, and a run
that found its template missing is already Error).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import cast

from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.protocol import Cluster
from rollwise.operator.world import LoopCluster
from rollwise.runtime.analysis import reconcile_run
from rollwise.runtime.cache import CacheReader, Store
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.queue import WorkQueue
from rollwise.runtime.recorder import AsyncEventRecorder
from rollwise.runtime.registrations import ANALYSIS
from rollwise.runtime.wakes import ObjectKey
from rollwise.runtime.workers import NotLeader

__all__ = ["AnalysisRunController"]


class _FencedWrites:
    """The run's writes, each behind the leader fence (a standby measures nothing it would have to write)."""

    __slots__ = ("is_leader", "verbs")

    def __init__(self, verbs: LoopCluster, is_leader: Callable[[], bool]) -> None:
        self.verbs = verbs
        self.is_leader = is_leader

    async def update(self, obj: Obj) -> Obj:
        self._fence(obj)
        return await self.verbs.update(obj)

    async def update_status(self, obj: Obj) -> Obj:
        self._fence(obj)
        return await self.verbs.update_status(obj)

    def _fence(self, obj: Obj) -> None:
        if not self.is_leader():
            raise NotLeader(f"{namespace_of(obj)}/{name_of(obj)}: not the leader; the run's write not made")


class AnalysisRunController:
    def __init__(self, *, world: LoopCluster, runs: Store, templates: Store, queue: WorkQueue[Hashable],
                 recorder: AsyncEventRecorder | None, wall_time: Callable[[], float], is_leader: Callable[[], bool],
                 component: str) -> None:
        self.writes = _FencedWrites(world, is_leader)
        self.runs = runs
        self.templates = templates
        self.queue = queue
        self.recorder = recorder
        self.wall_time = wall_time
        self.is_leader = is_leader
        self.component = component
        self._reader = cast(Cluster, CacheReader({"AnalysisRun": runs, "AnalysisTemplate": templates}))

    def register(self, changes: ChangeDispatcher) -> None:
        """Have ``changes`` wake this controller by its row's rule (``ANALYSIS.woken_by``, over its own caches)."""
        changes.add_objects(ANALYSIS, self._reader, self._wake)

    def _wake(self, keys: Iterable[ObjectKey]) -> None:
        for _, ns, name in keys:
            self.queue.add((ns, name))

    async def reconcile(self, key: Hashable) -> float | None:
        ns, name = cast(tuple[str, str], key)
        run = self.runs.get(ns, name)
        if run is None:
            return None
        templates = {name_of(t): t for t in self.templates.list(ns)}
        outcome = await reconcile_run(run, templates, writes=self.writes, now=self.wall_time)
        if self.recorder is not None:
            for event in outcome.events:
                self.recorder.record(run, event, self.component)
        return outcome.requeue
