"""What the operator needs from an API: the cluster verbs, async, and a list/watch source per kind.

``rollwise.cluster.client.kube.KubeCluster`` implements it over the API server; tests implement it over
``MemoryCluster``. ``LoopCluster`` gives it the ``Cluster`` verbs' shape, as coroutines, for
``runtime.execute.execute_async`` on the operator's loop, so the Plan-to-writes rules (order, failure handling, events)
stay in the one executor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from rollwise.api.meta import Obj
from rollwise.cluster.client.listwatch import ListWatchSource
from rollwise.cluster.client.scope import Selector
from rollwise.cluster.protocol import Propagation
from rollwise.cluster.resources import POD, ResourceRef

__all__ = ["AsyncCluster", "LoopCluster"]

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


class LoopCluster:
    """The executor's verbs (``runtime.execute.AsyncVerbs``) over an ``AsyncCluster``, on the running loop.

    ``pod_uid(namespace, name)`` gives the uid of the pod the controller decided about (from its cache): every
    pod delete carries it as a precondition, so a pod recreated under the same name since is never deleted by
    mistake (the API server answers Conflict). Each call is bounded (``CALL_TIMEOUT_SECONDS``, then TimeoutError):
    a worker never waits for ever on one write, whatever the transport's own timeouts.
    """

    __slots__ = ("pod_uid", "world")

    def __init__(self, world: AsyncCluster, *, pod_uid: Callable[[str, str], str | None] | None = None) -> None:
        self.world = world
        self.pod_uid = pod_uid

    async def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        return await _bounded(self.world.get(kind, namespace, name))

    async def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        return await _bounded(self.world.create(obj))

    async def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        return await _bounded(self.world.update(obj))

    async def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        return await _bounded(self.world.update_status(obj))

    async def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *,
                    actor: str = "user") -> Obj:
        return await _bounded(self.world.patch(kind, namespace, name, merge))

    async def delete(self, kind: ResourceRef, namespace: str, name: str, *,
                     grace_period_seconds: float | None = None, propagation: Propagation = "Background",
                     actor: str = "user") -> Obj | None:
        is_pod = kind in ("Pod", POD)
        uid = self.pod_uid(namespace, name) if is_pod and self.pod_uid is not None else None
        grace = None if grace_period_seconds is None else int(grace_period_seconds)
        return await _bounded(self.world.delete(kind, namespace, name, uid=uid, grace_period_seconds=grace,
                                                propagation=propagation))


async def _bounded(call: Awaitable[T]) -> T:
    """The call, or TimeoutError after ``CALL_TIMEOUT_SECONDS``."""
    async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
        return await call
