"""What the operator adds to the one set controller (``runtime/reconciler.SetController``): its informer wiring and
the hooks its reconcile takes.

One reconcile of the operator runs the runtime's reconcile with
1. reads from the informer caches (``runtime/set_reads.CacheReads``), which cannot see this controller's own writes
   until the watch delivers them: the chain stops at the first controller that wrote;
2. ``CacheConsistency``: the KEP-5647 check, every informer must have seen this controller's own last writes for
   the set (a set gone: its record is forgotten);
3. ``OperatorWrites``: the leader fence, one log line per action with the set, the object and the Plan's reason,
   then ``runtime.execute.execute_async`` on the loop through ``LoopCluster`` (UID preconditions on pod deletes),
   every returned resourceVersion recorded for step 2; events to the recorder.

Which change wakes which set is the runtime's one table (``runtime/routing.py``), the same as in the simulator
and ``up``; ``SetWakes`` keeps the keys of its own resource (the custom kind, or ``apps/v1`` for the quorum
companion).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.cluster.client.scope import stamp
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import GroupKind, group_of
from rollwise.controllers.plan import Plan
from rollwise.operator.world import AsyncCluster, LoopCluster
from rollwise.runtime.cache import Delta, Store
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.execute import execute, execute_async
from rollwise.runtime.queue import WorkQueue
from rollwise.runtime.recorder import AsyncEventRecorder
from rollwise.runtime.recording import WriteNotes
from rollwise.runtime.registrations import Registration, sets_woken
from rollwise.runtime.samples import MetricsRegistry
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.workers import CacheBehind, NotLeader

__all__ = ["CacheConsistency", "OperatorWrites", "SetWakes"]

log = logging.getLogger("rollwise.runtime.sets")


def _owner(key: SetKey) -> tuple[str, str]:
    """The consistency record's key: a set's ``(namespace, name)`` (one record store per controller and kind)."""
    return key[1], key[2]


class CacheConsistency:
    """The read-your-writes check over ``consistency`` (``reconciler.Consistency``)."""

    def __init__(self, consistency: ConsistencyStore) -> None:
        self.store = consistency

    def check(self, key: SetKey, sts: Obj) -> None:
        behind = self.store.check(_owner(key), uid_of(sts))  # a set recreated under the name starts clean
        if behind:
            raise CacheBehind(", ".join(behind))

    def forget(self, key: SetKey) -> None:
        self.store.clear(_owner(key))


class OperatorWrites:
    """Executes an operator's plan (``reconciler.AsyncSetWrites``): under ``actor``, only while ``is_leader``,
    logged action by action as ``name``; through ``world`` (or ``inline``, an in-process store: tests), each write
    noted for the consistency check; events to ``recorder``."""

    def __init__(self, name: str, *, world: AsyncCluster, consistency: ConsistencyStore, tracked: frozenset[str],
                 pods: Store | None, recorder: AsyncEventRecorder | None, is_leader: Callable[[], bool], actor: str,
                 inline: Cluster | None = None) -> None:
        self.name = name
        self.world = world
        self.consistency = consistency
        self.tracked = tracked
        self.pods = pods
        self.recorder = recorder
        self.is_leader = is_leader
        self.actor = actor
        self.inline = inline

    async def write(self, row: Registration, key: SetKey, sts: Obj, plan: Plan) -> ApiStatusError | None:
        _, ns, name = key
        if not self.is_leader():
            raise NotLeader(f"{ns}/{name}: not the leader; {len(plan.actions)} actions not taken")
        for action in plan.actions:
            kind, obj = type(action).__name__, _target(action)
            reason = getattr(action, "reason", "") or getattr(action, "message", "")
            log.info("%s %s/%s: %s%s: %s", self.name, ns, name, kind, f" {obj}" if obj else "", reason,
                     extra={"controller": self.name, "set": f"{ns}/{name}", "action": kind, "object": obj or None,
                            "reason": reason})
        # What the operator creates carries the label its informers select by (cluster/client/scope.py).
        notes = WriteNotes(self.consistency, owner=_owner(key), owner_uid=uid_of(sts), tracked=self.tracked,
                           prepare=stamp)
        if self.inline is not None:
            outcome = execute(plan, self.inline, sts=sts, actor=self.actor, hooks=notes)
        else:
            outcome = await execute_async(plan, LoopCluster(self.world, pod_uid=self._pod_uid), sts=sts,
                                          actor=self.actor, hooks=notes)
        if self.recorder is not None:
            for event in outcome.events:
                self.recorder.record(sts, event)
        return outcome.error

    def _pod_uid(self, namespace: str, pod: str) -> str | None:
        cached = self.pods.get(namespace, pod) if self.pods is not None else None
        return uid_of(cached) if cached is not None else None


def _target(action: Any) -> str:
    for attr in ("name", "pod", "claim", "revision"):
        value = getattr(action, attr, None)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, dict):
            return name_of(value)
    return ""


class SetWakes:
    """Informer events to the work-queue keys of the sets of ``resource`` (``runtime/registrations.sets_woken``)."""

    def __init__(self, resource: GroupKind, *, sets: Store, queue: WorkQueue[Hashable],
                 consistency: ConsistencyStore, samples: MetricsRegistry | None,
                 wall_time: Callable[[], float]) -> None:
        self.resource = resource
        self.queue = queue
        self.consistency = consistency
        self.samples = samples
        self.wall_time = wall_time
        self._lookup = _CachedSets(sets)

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


class _CachedSets:
    """The sets of this controller's resource, from its informer's cache (``routing.SetLookup``)."""

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    def sets_in(self, namespace: str) -> list[Obj]:
        return self._store.list(namespace)

    def find(self, namespace: str, name: str) -> Obj | None:
        return self._store.get(namespace, name)
