"""One StatefulSet controller of the operator: informer events to work-queue keys, and one reconcile of a set.

Which change wakes which set is the runtime's one table (``runtime/routing.py``), the same as in the simulator
and ``up``; this controller keeps the keys of its own resource (the custom kind, or ``apps/v1`` for the quorum
companion).

One reconcile (``reconcile``):
1. the set from the cache (gone: forget its consistency record);
2. the KEP-5647 check: every informer must have seen this controller's own last writes for the set;
3. the pure decisions, ``decide(view) -> Plan``, on a view built from the caches by ``runtime.views.set_view``: the
   controllers of the kind in the chain order of ``runtime/registrations.py`` (the StatefulSet controller, then the
   quorum-aware one); a later one decides only when the ones before it have nothing to do, so it decides on the
   world they left, as in the simulator, without reading its own writes back from a cache that has not seen them;
4. the leader fence, then ``runtime.execute.execute_async`` on the loop through ``LoopCluster`` (UID preconditions
   on pod deletes), every returned resourceVersion recorded for step 2; events to the recorder, one log line per
   action with the set, the object and the Plan's reason.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.cluster.client.scope import stamp
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import group_of
from rollwise.controllers.plan import Plan
from rollwise.controllers.view import SetView
from rollwise.operator.world import AsyncCluster, LoopCluster
from rollwise.runtime.cache import CacheReader, Delta, Store
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.execute import execute, execute_async
from rollwise.runtime.hand_overs import HandOvers
from rollwise.runtime.queue import WorkQueue
from rollwise.runtime.recorder import AsyncEventRecorder
from rollwise.runtime.recording import WriteNotes
from rollwise.runtime.registrations import sets_woken
from rollwise.runtime.role_probes import RoleProbes
from rollwise.runtime.samples import MetricsRegistry
from rollwise.runtime.setkeys import set_resource
from rollwise.runtime.views import set_view
from rollwise.runtime.workers import CacheBehind, NotLeader

__all__ = ["SetController", "Stage"]

log = logging.getLogger("rollwise.runtime.sets")

Key = tuple[str, str]
Decide = Callable[[SetView], Plan]
Observer = Callable[[SetView, Plan], None]


@dataclass(frozen=True, slots=True)
class Stage:
    """One controller of the chain: its decision, the sets it decides for, and where its decisions are traced."""

    decide: Decide
    runs_for: Callable[[Obj], bool]
    trace: Observer | None = None
    probes: bool = False
    """Its view carries the role-probe answers of the set's members (the quorum-aware controller's)."""


class SetController:
    def __init__(self, name: str, *, world: AsyncCluster, set_api_version: str, stages: Sequence[Stage],
                 sets: Store, caches: dict[str, Store], queue: WorkQueue[Hashable], consistency: ConsistencyStore,
                 recorder: AsyncEventRecorder | None, gates: FeatureGates, wall_time: Callable[[], float],
                 is_leader: Callable[[], bool], actor: str, samples: MetricsRegistry | None = None,
                 inline: Cluster | None = None) -> None:
        self.name = name
        self.world = world
        self.set_api_version = set_api_version
        self.stages = tuple(stages)
        self.sets = sets
        self.caches = caches
        self.reader = CacheReader({**caches, "StatefulSet": sets})
        self.queue = queue
        self.consistency = consistency
        self.recorder = recorder
        self.gates = gates
        self.wall_time = wall_time
        self.is_leader = is_leader
        self.actor = actor
        self.samples = samples
        self.role_probes: RoleProbes | None = None
        """Asks role-probed sets' members who leads, off the loop, for stages with ``probes`` (role_probes.py)."""
        self.hand_overs: HandOvers | None = None
        """Answers a Patroni set's hand-over requests with a switchover, on threads of its own (hand_overs.py)."""
        self.inline = inline
        """An in-process store to execute plans against directly, on the loop (tests, the simulator); None: the
        API, through ``LoopCluster``."""
        self.tracked = frozenset(self.reader.stores)
        self.resource = set_resource({"apiVersion": set_api_version})
        self._lookup = _CachedSets(sets)

    # -- event handlers --------------------------------------------------------------------------------------

    def on_set(self, delta: Delta) -> None:
        obj = delta.new if delta.new is not None else delta.old
        assert obj is not None
        if delta.type == "DELETED":
            self.consistency.clear((namespace_of(obj), name_of(obj)))
        elif self.samples is not None and delta.new is not None:
            # statefulset_update_duration_seconds (seed 003), from status changes as the simulator measures it.
            self.samples.observe_set(delta.old, delta.new, self.wall_time())
        self._wake("StatefulSet", delta)

    def on_owned(self, delta: Delta) -> None:
        """A pod changed: wake its controlling set, or the sets that could adopt it."""
        self._wake("Pod", delta)

    def on_lease(self, delta: Delta) -> None:
        """A member Lease changed: wake the set it names."""
        self._wake("Lease", delta)

    def on_budget(self, delta: Delta) -> None:
        """A PodDisruptionBudget changed: wake every set of its namespace (a deletion may wait on it)."""
        self._wake("PodDisruptionBudget", delta)

    def on_run(self, delta: Delta) -> None:
        """An AnalysisRun changed: its verdict wakes the set whose canary step it is (runtime/routing.py)."""
        self._wake("AnalysisRun", delta)

    def on_claim(self, delta: Delta) -> None:
        """A claim changed: an expansion moved on or was refused (KEP-4650) wakes the set whose claim it is."""
        if delta.type == "MODIFIED":
            self._wake("PersistentVolumeClaim", delta)

    def _wake(self, kind: str, delta: Delta) -> None:
        obj = delta.new if delta.new is not None else delta.old
        assert obj is not None
        # The informer does not say who wrote a change: no write counts as this controller's own status write.
        change = Change(type=delta.type, kind=kind, namespace=namespace_of(obj), name=name_of(obj), obj=obj,
                        old=delta.old if delta.new is not None else None, actor="", at=0.0,
                        group=group_of(str(obj.get("apiVersion") or "")))
        for resource, ns, name in sets_woken(self._lookup, change):
            if resource == self.resource:
                self.queue.add((ns, name))

    # -- one reconcile ---------------------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> float | None:
        ns, name = cast(Key, key)
        sts = self.sets.get(ns, name)
        if sts is None:
            self.consistency.clear(key)
            return None
        behind = self.consistency.check(key, uid_of(sts))  # a set recreated under the name starts clean
        if behind:
            raise CacheBehind(", ".join(behind))
        view = set_view(cast(Cluster, self.reader), sts, now=self.wall_time(), gates=self.gates)
        requeue: float | None = None
        for stage in self.stages:
            if not stage.runs_for(sts):
                continue
            if stage.probes and self.role_probes is not None:
                # The GETs block (each bounded by the probe's timeoutSeconds): a thread, not the loop.
                view = dataclasses.replace(view, probes=await asyncio.to_thread(self.role_probes.answers, view))
            if stage.probes and self.hand_overs is not None:
                self.hand_overs.answer(view)
            plan = stage.decide(view)
            if self.samples is not None:
                self.samples.record(plan.metrics)
            requeue = _sooner(requeue, plan.requeue_after)
            if plan.actions:
                break
        else:
            return requeue
        if stage.trace is not None and self.is_leader():
            stage.trace(view, plan)
        if not self.is_leader():
            raise NotLeader(f"{ns}/{name}: not the leader; {len(plan.actions)} actions not taken")
        pods = self.caches.get("Pod")

        def pod_uid(namespace: str, pod: str) -> str | None:
            cached = pods.get(namespace, pod) if pods is not None else None
            return uid_of(cached) if cached is not None else None

        for action in plan.actions:
            kind, obj = type(action).__name__, _target(action)
            reason = getattr(action, "reason", "") or getattr(action, "message", "")
            log.info("%s %s/%s: %s%s: %s", self.name, ns, name, kind, f" {obj}" if obj else "", reason,
                     extra={"controller": self.name, "set": f"{ns}/{name}", "action": kind, "object": obj or None,
                            "reason": reason})
        # What the operator creates carries the label its informers select by (cluster.scope).
        notes = WriteNotes(self.consistency, owner=key, owner_uid=uid_of(sts), tracked=self.tracked, prepare=stamp)
        if self.inline is not None:
            outcome = execute(plan, self.inline, sts=sts, actor=self.actor, hooks=notes)
        else:
            outcome = await execute_async(plan, LoopCluster(self.world, pod_uid=pod_uid), sts=sts, actor=self.actor,
                                          hooks=notes)
        if self.recorder is not None:
            for event in outcome.events:
                self.recorder.record(sts, event)
        if outcome.error is not None:
            raise outcome.error
        return requeue


def _sooner(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _target(action: Any) -> str:
    for attr in ("name", "pod", "claim", "revision"):
        value = getattr(action, attr, None)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, dict):
            return name_of(value)
    return ""


class _CachedSets:
    """The sets of this controller's resource, from its informer's cache (``routing.SetLookup``)."""

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    def sets_in(self, namespace: str) -> list[Obj]:
        return self._store.list(namespace)

    def find(self, namespace: str, name: str) -> Obj | None:
        return self._store.get(namespace, name)
