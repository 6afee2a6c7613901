"""What the dashboard shows, kept current: every set's view and timeline, projected again on each change the
watches bring (and once a second, as ages grow and minReadySeconds pass), with a version number pages wait on."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.api.predicates import ready_since
from rollwise.cli.dashboard.timeline import Timeline
from rollwise.cli.follow import KIND_LABELS, Follower
from rollwise.cluster.resources import POD
from rollwise.projection import RolloutView

__all__ = ["Board", "SetKey"]

SetKey = tuple[str, str, str]
"""(kind label, namespace, name): ``("rsts", "default", "web")``."""
_TICK_SECONDS = 1.0


class Board:
    def __init__(self, follower: Follower, *, clock: Callable[[], float] = time.time) -> None:
        self.follower = follower
        self.clock = clock
        self.views: dict[SetKey, RolloutView] = {}
        self.timelines: dict[SetKey, Timeline] = {}
        self.version = 0
        self._bumped = asyncio.Event()
        """Set when the version moves on, then replaced: waiters hold the one of the version they saw."""

    def refresh(self) -> None:
        now = self.clock()
        views: dict[SetKey, RolloutView] = {}
        for gk, sts in self.follower.sets():
            ns, name = namespace_of(sts), name_of(sts)
            view = self.follower.view(gk, ns, name, now)
            if view is None:
                continue
            key = (KIND_LABELS[gk], ns, name)
            views[key] = view
            timeline = self.timelines.setdefault(key, Timeline())
            timeline.observe(view, since=_since(self.follower.of_kind(POD, ns)))
        for gone in [k for k in self.timelines if k not in views]:
            del self.timelines[gone]
        self.views = views
        self.version += 1
        self._bumped.set()
        self._bumped = asyncio.Event()

    async def run(self) -> None:
        """Project again on every change, until cancelled."""
        while True:
            self.refresh()
            await self.follower.changed(_TICK_SECONDS)

    async def wait(self, seen: int) -> int:
        """Wait until the board is newer than version ``seen``; return the new version."""
        while self.version <= seen:
            await self._bumped.wait()
        return self.version

    def find(self, namespace: str, name: str, kind: str | None) -> SetKey | None:
        """The set of that name: of the given kind, else the built-in kind first."""
        for label in (kind,) if kind else ("sts", "rsts"):
            if (label, namespace, name) in self.views:
                return label, namespace, name
        return None

    def summary(self) -> list[dict[str, Any]]:
        """One row per set, for the list page."""
        return [{"kind": v.kind, "namespace": v.namespace, "name": v.name, "state": v.state, "icon": v.icon,
                 "message": v.message, "desired": v.desired, "updated": v.updated, "ready": v.ready,
                 "available": v.available, "strategy": v.strategy, "href": f"/sets/{v.namespace}/{v.name}"
                 f"?kind={v.kind}"} for v in self.views.values()]

    def detail(self, key: SetKey) -> dict[str, Any] | None:
        view = self.views.get(key)
        if view is None:
            return None
        return {"view": view.to_json(), "timeline": self.timelines[key].to_json()}


def _since(pods: list[Obj]) -> dict[str, float]:
    """When each pod's present state began, as far as its object says: Ready since, else created."""
    out = {}
    for pod in pods:
        t = ready_since(pod)
        if t is None:
            t = (pod.get("metadata") or {}).get("creationTimestamp")
        if isinstance(t, (int, float)):
            out[name_of(pod)] = float(t)
    return out
