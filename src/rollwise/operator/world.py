"""What the operator needs from an API: the cluster verbs, async, and a list/watch source per kind.

``rollwise.cluster.kube.KubeCluster`` implements it over the API server; tests implement it over ``MemoryCluster``.
``BlockingCluster`` turns it back into the synchronous ``Cluster`` protocol for ``drivers.execute``, which runs
in a worker thread, so the Plan-to-writes rules (order, failure handling, events) stay in one place.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Protocol, TypeVar

from rollwise.api.meta import Obj
from rollwise.cluster.listwatch import ListWatchSource
from rollwise.cluster.protocol import Change, Propagation
from rollwise.cluster.resources import POD, ResourceRef
from rollwise.cluster.scope import Selector

__all__ = ["AsyncCluster", "BlockingCluster"]

T = TypeVar("T")

CALL_TIMEOUT_SECONDS = 60.0


class AsyncCluster(Protocol):
    async def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj: ...

    async def create(self, obj: Obj) -> Obj: ...

    async def update(self, obj: Obj) -> Obj: ...

    async def update_status(self, obj: Obj) -> Obj: ...

    async def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj: ...

    async def delete(self, kind: ResourceRef, namespace: str, name: str, *, uid: str | None = None,
                     resource_version: str | None = None, grace_period_seconds: int | None = None,
                     propagation: str | None = None) -> Obj | None: ...

    def list_watch(self, kind: str, namespace: str | None = None, *,
                   labels: Selector | None = None) -> ListWatchSource: ...


class BlockingCluster:
    """The sync ``Cluster`` verbs over an ``AsyncCluster`` whose loop runs in another thread.

    ``pod_uid(namespace, name)`` gives the uid of the pod the controller decided about (from its cache): every
    pod delete carries it as a precondition, so a pod recreated under the same name since is never deleted by
    mistake (the API server answers Conflict).
    """

    def __init__(self, world: AsyncCluster, loop: asyncio.AbstractEventLoop, *,
                 pod_uid: Callable[[str, str], str | None] | None = None) -> None:
        self.world = world
        self.loop = loop
        self.pod_uid = pod_uid

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(CALL_TIMEOUT_SECONDS)

    def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        return self._call(self.world.get(kind, namespace, name))

    def list(self, kind: str, namespace: str | None = None, *,
             selector: Mapping[str, Any] | None = None) -> builtins.list[Obj]:
        raise NotImplementedError("the operator reads from its informers' caches, never by listing")

    def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        return self._call(self.world.create(obj))

    def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        return self._call(self.world.update(obj))

    def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        return self._call(self.world.update_status(obj))

    def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *,
              actor: str = "user") -> Obj:
        return self._call(self.world.patch(kind, namespace, name, merge))

    def delete(self, kind: ResourceRef, namespace: str, name: str, *, grace_period_seconds: float | None = None,
               propagation: Propagation = "Background", actor: str = "user") -> Obj | None:
        is_pod = kind in ("Pod", POD)
        uid = self.pod_uid(namespace, name) if is_pod and self.pod_uid is not None else None
        grace = None if grace_period_seconds is None else int(grace_period_seconds)
        return self._call(self.world.delete(kind, namespace, name, uid=uid, grace_period_seconds=grace,
                                            propagation=propagation))

    def changes_since(self, cursor: int) -> tuple[builtins.list[Change], int]:
        raise NotImplementedError("the operator follows changes through its informers")
