"""A local copy of the objects a rollout view is projected from, kept current by watches (list, then watch from
the list's resourceVersion; relist when a watch ends or the server says 410 Gone). Used by ``get --watch``,
``status`` and the dashboard: each waits on ``changed()`` and projects again; nothing polls the API."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any, cast

from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.client.kube import KubeCluster, KubeListWatch
from rollwise.cluster.resources import (
    CONTROLLER_REVISION,
    EVENT_V1,
    LEASE,
    POD,
    ROLLWISE_STATEFULSET,
    STATEFULSET,
    GroupKind,
)
from rollwise.projection import RolloutView, project

__all__ = ["KIND_LABELS", "Follower"]

log = logging.getLogger(__name__)

KIND_LABELS = {STATEFULSET: "sts", ROLLWISE_STATEFULSET: "rsts"}
_OTHERS = (POD, CONTROLLER_REVISION, LEASE, EVENT_V1)
_WATCH_SECONDS = 300
_RETRY_SECONDS = 1.0


class Follower:
    """Every object of the watched kinds in ``namespace`` (None: all namespaces), by kind and (namespace, name).

    ``start()`` lists each kind once (raising the API error of a set kind, so a typo fails fast; a kind the
    server lacks, such as the CRD not installed, is left empty) and then keeps each current in the background."""

    def __init__(self, kube: KubeCluster, namespace: str | None, set_kinds: Iterable[GroupKind]) -> None:
        self.kube = kube
        self.namespace = namespace
        self.set_kinds = tuple(set_kinds)
        self.objects: dict[GroupKind, dict[tuple[str, str], Obj]] = {}
        self._changed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.generation = 0
        """Counts changes, so a consumer can tell whether anything moved since it last looked."""
        self.unreachable: str | None = None
        """The error of the last list that failed, while no list or watch has succeeded since: what is held may be
        stale because the API server stopped answering (``status`` then says it could not ask, not timed out)."""

    async def start(self) -> None:
        for gk in (*self.set_kinds, *_OTHERS):
            try:
                rv = await self._relist(gk)
            except NotFound:
                if gk in self.set_kinds and len(self.set_kinds) == 1:
                    raise
                self.objects[gk] = {}
                continue  # this server does not serve the kind (no CRD): nothing to show of it
            self._tasks.append(asyncio.create_task(self._follow(gk, rv)))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def changed(self, timeout: float | None = None) -> bool:
        """Wait for the next change (True) or ``timeout`` seconds (False)."""
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            return False
        self._changed.clear()
        return True

    def _source(self, gk: GroupKind) -> KubeListWatch:
        return KubeListWatch(self.kube, cast(str, gk), self.namespace)  # a GroupKind is a ResourceRef too

    async def _relist(self, gk: GroupKind) -> str:
        listed = await self._source(gk).list(resource_version="")
        self.objects[gk] = {(namespace_of(o), name_of(o)): o for o in listed.items}
        self._touch()
        return listed.resource_version

    def _touch(self) -> None:
        self.generation += 1
        self.unreachable = None
        self._changed.set()

    async def _follow(self, gk: GroupKind, rv: str) -> None:
        table = self.objects[gk]
        while True:
            try:
                async for ev in self._source(gk).watch(resource_version=rv, timeout_seconds=_WATCH_SECONDS):
                    if ev.type == "BOOKMARK":
                        rv = str((ev.obj.get("metadata") or {}).get("resourceVersion") or rv)
                        continue
                    key = (namespace_of(ev.obj), name_of(ev.obj))
                    if ev.type == "DELETED":
                        table.pop(key, None)
                    else:
                        table[key] = ev.obj
                    rv = str((ev.obj.get("metadata") or {}).get("resourceVersion") or rv)
                    self._touch()
                rv = await self._relist(gk)  # the server closed the watch: start again from a fresh list
                table = self.objects[gk]
            except asyncio.CancelledError:
                raise
            except (ApiStatusError, OSError, ValueError) as err:  # 410 Gone, a dropped connection: relist
                log.debug("watch of %s ended (%s); listing again", gk, err)
                await asyncio.sleep(_RETRY_SECONDS)
                try:
                    rv = await self._relist(gk)
                    table = self.objects[gk]
                except (ApiStatusError, OSError, ValueError) as again:
                    self.unreachable = str(again)
                    continue
            except Exception as err:  # lightkube raises httpx errors on a dropped stream; keep following
                log.debug("watch of %s failed (%s); listing again", gk, err)
                await asyncio.sleep(_RETRY_SECONDS)

    # -- reading --------------------------------------------------------------------------------------------

    def of_kind(self, gk: GroupKind, namespace: str | None = None) -> list[Obj]:
        return [o for (ns, _), o in (self.objects.get(gk) or {}).items() if namespace is None or ns == namespace]

    def find(self, gk: GroupKind, namespace: str, name: str) -> Obj | None:
        return (self.objects.get(gk) or {}).get((namespace, name))

    def sets(self) -> list[tuple[GroupKind, Obj]]:
        """Every set of the watched kinds, by namespace and name."""
        found = [(gk, o) for gk in self.set_kinds for o in self.of_kind(gk)]
        return sorted(found, key=lambda p: (namespace_of(p[1]), name_of(p[1]), p[0].group))

    def view(self, gk: GroupKind, namespace: str, name: str, now: float) -> RolloutView | None:
        """The projection of one set from what is held now, or None if the set is not there."""
        sts = self.find(gk, namespace, name)
        if sts is None:
            return None
        return project_from(sts, kind=KIND_LABELS[gk], now=now,
                            objects=lambda k: self.of_kind(k, namespace))


def project_from(sts: Obj, *, kind: str, now: float, objects: Callable[[GroupKind], list[Any]]) -> RolloutView:
    """``project`` with the set's namespace's pods, revisions, Leases and Events taken from ``objects(kind)``."""
    return project(sts, kind=kind, pods=objects(POD), revisions=objects(CONTROLLER_REVISION),
                   leases=objects(LEASE), events=objects(EVENT_V1), now=now)
