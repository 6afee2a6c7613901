"""In-memory parts for runtime tests: a list/watch source with a bounded history, Lease and Event clients over
the memory store, and a helper that runs a coroutine on a fresh event loop."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Coroutine, Mapping
from typing import Any, TypeVar

from rollwise.api.errors import Gone, InternalError
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.runtime.informer import ListResult, WatchEvent

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


class FakeSource:
    """A resource on a fake server: objects, a resourceVersion counter and a history that can be compacted.

    Watches see events after their RV; a watch from before the compacted history gets Gone, as a real server's.
    ``close_watches()`` ends every open watch (a dropped connection); ``fail_next`` makes the next call raise.
    """

    def __init__(self, kind: str = "Pod") -> None:
        self.kind = kind
        self.rv = 0
        self.objects: dict[tuple[str, str], Obj] = {}
        self.history: list[tuple[int, str, Obj]] = []
        self.floor = 0  # events with rv <= floor were compacted
        self.lists: list[str] = []
        self.watches: list[str] = []
        self.fail_next = 0
        self._changed = asyncio.Condition()
        self._generation = 0

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def put(self, name: str, *, namespace: str = "default", labels: Mapping[str, str] | None = None,
                  owner_uid: str | None = None) -> Obj:
        self.rv += 1
        meta: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": str(self.rv),
                                "labels": dict(labels or {}), "uid": f"uid-{name}"}
        if owner_uid:
            meta["ownerReferences"] = [{"kind": "StatefulSet", "name": "web", "uid": owner_uid, "controller": True}]
        key = (namespace, name)
        obj = {"kind": self.kind, "metadata": meta}
        event = "MODIFIED" if key in self.objects else "ADDED"
        self.objects[key] = obj
        self.history.append((self.rv, event, obj))
        await self._notify()
        return obj

    async def remove(self, name: str, *, namespace: str = "default") -> None:
        self.rv += 1
        obj = copy.deepcopy(self.objects.pop((namespace, name)))
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.history.append((self.rv, "DELETED", obj))
        await self._notify()

    def compact(self) -> None:
        self.floor = self.rv
        self.history.clear()

    async def close_watches(self) -> None:
        self._generation += 1
        await self._notify()

    async def list(self, *, resource_version: str) -> ListResult:
        self.lists.append(resource_version)
        if self.fail_next:
            self.fail_next -= 1
            raise InternalError("injected")
        items = [self.objects[k] for k in sorted(self.objects)]
        return ListResult(items=items, resource_version=str(self.rv))

    async def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        self.watches.append(resource_version)
        since = int(resource_version or 0)
        if since < self.floor:
            raise Gone(f"too old resource version: {since} ({self.floor})")
        generation = self._generation
        while True:
            for rv, event, obj in list(self.history):
                if rv > since:
                    since = rv
                    yield WatchEvent(event, obj)  # type: ignore[arg-type]
            async with self._changed:
                if generation != self._generation:
                    return
                if since < self.floor:
                    raise Gone("compacted while watching")
                if not any(rv > since for rv, _, _ in self.history):
                    await self._changed.wait()
            if generation != self._generation:
                return


class MemoryLeases:
    """``LeaseClient`` over the memory store (whose resourceVersions give real 409s)."""

    def __init__(self, cluster: MemoryCluster, *, partitioned: bool = False) -> None:
        self.cluster = cluster
        self.partitioned = partitioned

    def _check(self) -> None:
        if self.partitioned:
            raise InternalError("connection refused")

    async def get(self, namespace: str, name: str) -> Obj:
        self._check()
        return self.cluster.get("Lease", namespace, name)

    async def create(self, lease: Obj) -> Obj:
        self._check()
        return self.cluster.create(lease, actor="elector")

    async def update(self, lease: Obj) -> Obj:
        self._check()
        return self.cluster.update(lease, actor="elector")


class MemoryEvents:
    """``EventSink`` over the memory store; ``fail`` raises on the next calls."""

    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster = cluster
        self.fail = 0
        self.calls: list[str] = []

    async def create(self, event: Obj) -> Obj:
        self.calls.append("create")
        if self.fail:
            self.fail -= 1
            raise InternalError("injected")
        return self.cluster.create(event, actor="recorder")

    async def patch(self, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj:
        self.calls.append("patch")
        return self.cluster.patch("Event", namespace, name, merge, actor="recorder")


def names(objs: list[Obj]) -> list[str]:
    return [f"{namespace_of(o)}/{name_of(o)}" for o in objs]
