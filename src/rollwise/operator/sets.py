"""One StatefulSet controller over the runtime: which events wake which set, and one reconcile of a set.

Event handlers mirror upstream ``stateful_set.go`` (reference upstream-statefulset.md §5.1): a pod or revision
wakes the set that controls it (by kind, group and name, as controller-runtime's ``OnlyControllerOwner``), an
orphan wakes every set in its namespace whose selector matches it, a member Lease wakes the sets of its namespace.

One reconcile (``reconcile``):
1. the set from the cache (gone: forget its consistency record);
2. the KEP-5647 check: every informer must have seen this controller's own last writes for the set;
3. the pure decision, ``reconcile(view) -> Plan``, on a view built from the caches by ``drivers.views.set_view``;
4. the leader fence, then ``drivers.execute`` in a worker thread through ``BlockingCluster`` (UID preconditions on
   pod deletes), every returned resourceVersion recorded for step 2; events to the recorder, one log line per
   action with the set, the object and the Plan's reason.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable
from typing import Any, cast

from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches, uid_of
from rollwise.cluster.protocol import Cluster
from rollwise.controllers.plan import Plan
from rollwise.controllers.view import SetView
from rollwise.operator.recording import RecordingCluster
from rollwise.operator.world import AsyncCluster, BlockingCluster
from rollwise.runtime.cache import CacheReader, Delta, Store
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.execute import execute
from rollwise.runtime.queue import WorkQueue
from rollwise.runtime.recorder import EventRecorder
from rollwise.runtime.samples import MetricsRegistry
from rollwise.runtime.views import set_view
from rollwise.runtime.workers import CacheBehind, NotLeader

__all__ = ["SetController"]

log = logging.getLogger("rollwise.runtime.sets")

Key = tuple[str, str]
Decide = Callable[[SetView], Plan]


class SetController:
    def __init__(self, name: str, *, world: AsyncCluster, set_api_version: str, decide: Decide,
                 sets: Store, caches: dict[str, Store], queue: WorkQueue, consistency: ConsistencyStore,
                 recorder: EventRecorder | None, gates: FeatureGates, wall_time: Callable[[], float],
                 is_leader: Callable[[], bool], actor: str, samples: MetricsRegistry | None = None,
                 inline: Cluster | None = None) -> None:
        self.name = name
        self.world = world
        self.set_api_version = set_api_version
        self.decide = decide
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
        self.inline = inline
        """An in-process store to execute plans against directly, on the loop (tests, the simulator); None: the
        API, through ``BlockingCluster`` in a worker thread."""
        self.tracked = frozenset(self.reader.stores)

    # -- event handlers --------------------------------------------------------------------------------------

    def on_set(self, delta: Delta) -> None:
        obj = delta.new if delta.new is not None else delta.old
        assert obj is not None
        key = (namespace_of(obj), name_of(obj))
        if delta.type == "DELETED":
            self.consistency.clear(key)
        elif self.samples is not None and delta.new is not None:
            # statefulset_update_duration_seconds (seed 003), from status changes as the simulator measures it.
            self.samples.observe_set(delta.old, delta.new, self.wall_time())
        self.queue.add(key)

    def on_owned(self, delta: Delta) -> None:
        """A pod or revision changed: wake its controlling set, or the sets that could adopt it."""
        for obj in (delta.old, delta.new):
            if obj is not None:
                for key in self._sets_for(obj):
                    self.queue.add(key)

    def on_lease(self, delta: Delta) -> None:
        obj = delta.new if delta.new is not None else delta.old
        assert obj is not None
        for sts in self.sets.list(namespace_of(obj)):
            self.queue.add((namespace_of(sts), name_of(sts)))

    def _sets_for(self, obj: Obj) -> list[Key]:
        ref = controller_of(obj)
        ns = namespace_of(obj)
        if ref is not None:
            if ref.get("kind") != "StatefulSet" or ref.get("apiVersion", self.set_api_version) != self.set_api_version:
                return []
            owner = self.sets.get(ns, str(ref.get("name")))
            return [(ns, name_of(owner))] if owner is not None and uid_of(owner) == ref.get("uid") else []
        return [(ns, name_of(s)) for s in self.sets.list(ns) if selector_matches(s["spec"].get("selector"),
                                                                                labels(obj))]

    # -- one reconcile ---------------------------------------------------------------------------------------

    async def reconcile(self, key: Hashable) -> float | None:
        ns, name = cast(Key, key)
        sts = self.sets.get(ns, name)
        if sts is None:
            self.consistency.clear(key)
            return None
        self.consistency.clear(key, uid_of(sts))  # a set recreated under the name starts clean
        behind = self.consistency.behind(key)
        if behind:
            raise CacheBehind(", ".join(behind))
        view = set_view(cast(Cluster, self.reader), sts, now=self.wall_time(), gates=self.gates)
        plan = self.decide(view)
        if self.samples is not None:
            self.samples.record(plan.metrics)
        if not plan.actions:
            return plan.requeue_after
        if not self.is_leader():
            raise NotLeader(f"{ns}/{name}: not the leader; {len(plan.actions)} actions not taken")
        pods = self.caches.get("Pod")

        def pod_uid(namespace: str, pod: str) -> str | None:
            cached = pods.get(namespace, pod) if pods is not None else None
            return uid_of(cached) if cached is not None else None

        target: Cluster = self.inline if self.inline is not None else cast(Cluster, BlockingCluster(
            self.world, asyncio.get_running_loop(), pod_uid=pod_uid))
        recording = cast(Cluster, RecordingCluster(target, self.consistency, owner=key, owner_uid=uid_of(sts),
                                                   tracked=self.tracked))
        for action in plan.actions:
            log.info("%s %s/%s: %s %s: %s", self.name, ns, name, type(action).__name__, _target(action),
                     getattr(action, "reason", "") or getattr(action, "message", ""))
        if self.inline is not None:
            outcome = execute(plan, recording, sts=sts, actor=self.actor)
        else:
            outcome = await asyncio.to_thread(execute, plan, recording, sts=sts, actor=self.actor)
        if self.recorder is not None:
            for event in outcome.events:
                self.recorder.record(sts, event.event_type, event.reason, event.message)
        if outcome.error is not None:
            raise outcome.error
        return plan.requeue_after


def _target(action: Any) -> str:
    for attr in ("name", "pod", "claim", "revision"):
        value = getattr(action, attr, None)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, dict):
            return name_of(value)
    return ""
