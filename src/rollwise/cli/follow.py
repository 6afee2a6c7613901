"""A local copy of the objects a rollout view is projected from, kept current by the runtime's reflector (list, then
watch from the list's resourceVersion; relist when the server says 410 Gone). Used by ``get --watch``, ``status``
and the dashboard: each waits on ``changed()`` and projects again; nothing polls the API."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any, cast

from rollwise.api.errors import NotFound
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.client.kube import KubeCluster, KubeListWatch
from rollwise.cluster.client.listwatch import ListWatchSource
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
from rollwise.runtime.cache import Delta
from rollwise.runtime.clock import AsyncClock, WallClock
from rollwise.runtime.informer import Informer

__all__ = ["KIND_LABELS", "Follower"]


KIND_LABELS = {STATEFULSET: "sts", ROLLWISE_STATEFULSET: "rsts"}
_OTHERS = (POD, CONTROLLER_REVISION, LEASE, EVENT_V1)


class Follower:
    """Every object of the watched kinds in ``namespace`` (None: all namespaces), by kind and (namespace, name).

    ``start()`` lists each kind once (raising the API error of a set kind, so a typo fails fast; a kind the
    server lacks, such as the CRD not installed, is left empty) and then keeps each current in the background, each
    kind through the runtime's reflector (``runtime/informer.Informer``: a watch from the last resourceVersion seen,
    a relist on 410 Gone that leaves no deleted object behind, back-off on errors) rather than a loop of its own.
    ``source`` and ``clock`` are the server's and the wall's unless given (a test gives fakes)."""

    def __init__(self, kube: KubeCluster, namespace: str | None, set_kinds: Iterable[GroupKind], *,
                 source: Callable[[GroupKind], ListWatchSource] | None = None,
                 clock: AsyncClock | None = None) -> None:
        self.kube = kube
        self.namespace = namespace
        self.set_kinds = tuple(set_kinds)
        self.objects: dict[GroupKind, dict[tuple[str, str], Obj]] = {}
        self._source = source or self._kube_source
        self._clock = clock or WallClock()
        self._informers: list[Informer] = []
        self._changed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.generation = 0
        """Counts changes, so a consumer can tell whether anything moved since it last looked."""

    @property
    def unreachable(self) -> str | None:
        """The error of the last list or watch that failed, while none has succeeded since: what is held may be
        stale because the API server stopped answering (``status`` then says it could not ask, not timed out)."""
        return next((i.failing for i in self._informers if i.failing is not None), None)

    async def start(self) -> None:
        for gk in (*self.set_kinds, *_OTHERS):
            informer = Informer(self._source(gk), self._clock, failure_level=logging.DEBUG)
            informer.add_handler(self._taker(gk))
            try:
                await informer.sync()
            except NotFound:
                if gk in self.set_kinds and len(self.set_kinds) == 1:
                    raise
                self.objects[gk] = {}
                continue  # this server does not serve the kind (no CRD): nothing to show of it
            self._touch()
            self._informers.append(informer)
            self._tasks.append(asyncio.create_task(informer.run(listed=True)))

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

    def _kube_source(self, gk: GroupKind) -> KubeListWatch:
        return KubeListWatch(self.kube, cast(str, gk), self.namespace)  # a GroupKind is a ResourceRef too

    def _taker(self, gk: GroupKind) -> Callable[[Delta], None]:
        """The informer's handler for ``gk``: keep the kind's objects by (namespace, name), and say it changed."""
        table = self.objects.setdefault(gk, {})

        def take(delta: Delta) -> None:
            if delta.new is None:
                if delta.old is not None:
                    table.pop((namespace_of(delta.old), name_of(delta.old)), None)
            else:
                table[(namespace_of(delta.new), name_of(delta.new))] = delta.new
            self._touch()
        return take

    def _touch(self) -> None:
        self.generation += 1
        self._changed.set()

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
