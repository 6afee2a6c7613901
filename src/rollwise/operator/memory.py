"""The operator over the memory store: ``AsyncCluster``, Lease and Event clients on ``MemoryCluster``.

It runs the whole operator in one process, in virtual time, with no server: the runtime's tests and
``bench/runtime.py`` use it. Writes wake the watchers; a watch replays the change feed after a resourceVersion
(Gone once that part of the feed was compacted); a pod delete honours a UID precondition, as the API server does.
``actor`` names the writer, so each operator replica's writes can be told apart in the feed.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypeVar, cast

from rollwise.api.errors import Conflict, Gone, InternalError
from rollwise.api.meta import Obj
from rollwise.cluster.client.listwatch import ListResult, WatchEvent
from rollwise.cluster.client.scope import Selector
from rollwise.cluster.protocol import Change, Propagation
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, ResourceRef
from rollwise.cluster.store.memory import MemoryCluster

T = TypeVar("T")


class Feed:
    """One notification point for every world over the same store."""

    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster = cluster
        self.changed = asyncio.Condition()

    async def notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    def poke(self) -> None:
        asyncio.get_running_loop().create_task(self.notify())

    def last_rv(self) -> str:
        """The newest resourceVersion in the store (the feed's last entry), "0" before the first write."""
        end = self.cluster.cursor
        if end == 0:
            return "0"
        changes, _ = self.cluster.changes_since(end - 1)
        return str(changes[-1].obj["metadata"]["resourceVersion"])


class MemoryListWatch:
    """``labels`` selects as the API server does: an object that stops matching is a DELETED event."""

    def __init__(self, feed: Feed, kind: str, namespace: str | None, *, ref: ResourceRef | None = None,
                 labels: Selector | None = None) -> None:
        self.feed = feed
        self.kind = kind
        self.namespace = namespace
        self.resource = feed.cluster.resources.resolve(ref if ref is not None else kind)
        self.labels = labels

    def _matches(self, obj: Obj) -> bool:
        have = (obj.get("metadata") or {}).get("labels") or {}
        return all((k in have) if v is None else (k not in have) if v is False else have.get(k) == v
                   for k, v in (self.labels or {}).items())

    async def list(self, *, resource_version: str) -> ListResult:
        return ListResult(items=[o for o in self.feed.cluster.list(self.resource, self.namespace) if self._matches(o)],
                          resource_version=self.feed.last_rv())

    async def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        cluster = self.feed.cluster
        since = int(resource_version or 0)
        cursor = self._cursor_after(since)
        while True:
            changes, cursor = cluster.changes_since(cursor)
            for change in changes:
                rv = int(change.obj["metadata"]["resourceVersion"])
                if rv <= since or change.resource != self.resource:
                    continue
                if self.namespace is not None and change.namespace != self.namespace:
                    continue
                since = rv
                if self._matches(change.obj):
                    yield WatchEvent(change.type, change.obj)
                elif change.type == "MODIFIED":  # it left the selection (or never was in it: a no-op delete)
                    yield WatchEvent("DELETED", change.obj)
            async with self.feed.changed:
                if cursor == cluster.cursor:
                    await self.feed.changed.wait()

    def _cursor_after(self, rv: int) -> int:
        """The feed position just after the change that wrote ``rv``; Gone if the feed no longer reaches back."""
        cluster = self.feed.cluster
        lo, hi = 0, cluster.cursor
        while lo < hi:  # the feed is in resourceVersion order: binary search for the first change newer than rv
            mid = (lo + hi) // 2
            try:
                changes, _ = cluster.changes_since(mid)
            except Gone:
                lo = mid + 1
                continue
            if int(changes[0].obj["metadata"]["resourceVersion"]) <= rv:
                lo = mid + 1
            else:
                hi = mid
        if lo > 0:
            cluster.changes_since(lo - 1)  # raises Gone when the change at rv itself was compacted away
        return lo


class MemoryWorld:
    """``set_ref`` is what ``StatefulSet`` means to this world's controller (the CR, or ``apps/v1``)."""

    def __init__(self, feed: Feed, *, actor: str, set_ref: ResourceRef = ROLLWISE_STATEFULSET) -> None:
        self.feed = feed
        self.cluster = feed.cluster
        self.actor = actor
        self.set_ref = set_ref
        self.sync = SyncWorld(self)

    def ref(self, kind: ResourceRef) -> ResourceRef:
        return self.set_ref if kind == "StatefulSet" else kind

    def _done(self, out: T) -> T:
        self.feed.poke()
        return out

    async def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        return self.cluster.get(self.ref(kind), namespace, name)

    async def create(self, obj: Obj) -> Obj:
        return self._done(self.cluster.create(obj, actor=self.actor))

    async def update(self, obj: Obj) -> Obj:
        return self._done(self.cluster.update(obj, actor=self.actor))

    async def update_status(self, obj: Obj) -> Obj:
        return self._done(self.cluster.update_status(obj, actor=self.actor))

    async def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj:
        return self._done(self.cluster.patch(self.ref(kind), namespace, name, merge, actor=self.actor))

    async def delete(self, kind: ResourceRef, namespace: str, name: str, *, uid: str | None = None,
                     resource_version: str | None = None, grace_period_seconds: int | None = None,
                     propagation: str | None = None) -> Obj | None:
        return self._done(self.sync.delete_checked(kind, namespace, name, uid=uid,
                                                   grace_period_seconds=grace_period_seconds,
                                                   propagation=cast(Propagation, propagation or "Background")))

    def list_watch(self, kind: str, namespace: str | None = None, *,
                   labels: Selector | None = None) -> MemoryListWatch:
        return MemoryListWatch(self.feed, kind, namespace, ref=self.ref(kind), labels=labels)


class SyncWorld:
    """The synchronous ``Cluster`` verbs the operator executes plans against inline (with UID preconditions)."""

    def __init__(self, world: MemoryWorld) -> None:
        self.world = world
        self.cluster = world.cluster

    def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        return self.cluster.get(self.world.ref(kind), namespace, name)

    def list(self, kind: ResourceRef, namespace: str | None = None, *,
             selector: Mapping[str, Any] | None = None) -> builtins.list[Obj]:
        return self.cluster.list(self.world.ref(kind), namespace, selector=selector)

    def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        return self.world._done(self.cluster.create(obj, actor=self.world.actor, handed_over=handed_over))

    def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        return self.world._done(self.cluster.update(obj, actor=self.world.actor))

    def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        return self.world._done(self.cluster.update_status(obj, actor=self.world.actor, handed_over=handed_over))

    def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *,
              actor: str = "user") -> Obj:
        return self.world._done(self.cluster.patch(self.world.ref(kind), namespace, name, merge,
                                                   actor=self.world.actor))

    def delete(self, kind: ResourceRef, namespace: str, name: str, *, grace_period_seconds: float | None = None,
               propagation: Propagation = "Background", actor: str = "user") -> Obj | None:
        return self.world._done(self.delete_checked(kind, namespace, name, uid=None,
                                                    grace_period_seconds=grace_period_seconds,
                                                    propagation=propagation))

    def delete_checked(self, kind: ResourceRef, namespace: str, name: str, *, uid: str | None,
                       grace_period_seconds: float | None, propagation: Propagation = "Background") -> Obj | None:
        ref = self.world.ref(kind)
        if uid is not None and self.cluster.get(ref, namespace, name)["metadata"]["uid"] != uid:
            raise Conflict(f'Precondition failed: UID in precondition: {uid}')
        return self.cluster.delete(ref, namespace, name, grace_period_seconds=grace_period_seconds,
                                   propagation=propagation, actor=self.world.actor)

    def changes_since(self, cursor: int) -> tuple[builtins.list[Change], int]:
        return self.cluster.changes_since(cursor)


class Leases:
    def __init__(self, world: MemoryWorld) -> None:
        self.world = world
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise InternalError("partitioned")

    async def get(self, namespace: str, name: str) -> Obj:
        self._check()
        return self.world.cluster.get("Lease", namespace, name)

    async def create(self, lease: Obj) -> Obj:
        self._check()
        return await self.world.create(lease)

    async def update(self, lease: Obj) -> Obj:
        self._check()
        return await self.world.update(lease)


class Events:
    def __init__(self, world: MemoryWorld) -> None:
        self.world = world

    async def create(self, event: Obj) -> Obj:
        return self.world.cluster.create(event, actor="events")

    async def patch(self, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj:
        return self.world.cluster.patch("Event", namespace, name, merge, actor="events")
