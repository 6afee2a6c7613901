"""Watch fan-out over the store's change feed: a bounded history per resource, resume, 410, selector transitions.

``Hub.pump()`` drains the memory store's feed after every write (the server's and the controllers'), keeps the
newest ``capacity`` changes per store kind, and hands each change to the live subscribers. A watch that starts
from a resourceVersion replays the history after it; one older than the history's floor gets ``Expired`` (410),
as the API server's watch cache answers. Each subscriber sees an event through its own selectors: an object that
starts matching is ADDED, one that stops matching is DELETED (informers with selectors depend on it).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rollwise.api.errors import Gone
from rollwise.api.meta import Obj
from rollwise.apiserver.selectors import Selector
from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change

__all__ = ["DEFAULT_HISTORY", "Event", "Hub", "Subscription", "filter_change"]

DEFAULT_HISTORY = 10_000
Event = tuple[str, Obj]  # (type, object in store form)


@dataclass(slots=True, kw_only=True)
class Subscription:
    kind: str
    namespace: str | None
    labels: Selector
    fields: Selector
    queue: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)


def filter_change(ch: Change, *, namespace: str | None, labels: Selector, fields: Selector) -> Event | None:
    """The event one watcher sees for a change, or None."""
    if namespace is not None and ch.namespace != namespace:
        return None

    def matches(obj: Obj | None) -> bool:
        return obj is not None and labels.matches(obj) and fields.matches(obj)

    if ch.type == "DELETED":
        return ("DELETED", ch.obj) if matches(ch.obj) or matches(ch.old) else None
    now, before = matches(ch.obj), matches(ch.old)
    if now and (ch.type == "ADDED" or not before):
        return "ADDED", ch.obj
    if now:
        return "MODIFIED", ch.obj
    if before:
        return "DELETED", ch.obj
    return None


class Hub:
    def __init__(self, cluster: MemoryCluster, *, capacity: int = DEFAULT_HISTORY) -> None:
        self.cluster = cluster
        self.capacity = capacity
        self.rv = 0
        self._cursor = cluster.cursor
        self._history: dict[str, deque[tuple[int, Change]]] = {}
        self._floor: dict[str, int] = {}  # per kind: events at or below this RV were dropped
        self._subs: list[Subscription] = []
        self._listeners: list[Callable[[Change], None]] = []
        self._pumping = False
        self._again = False

    def listen(self, callback: Callable[[Change], None]) -> None:
        """Call ``callback`` with every change, after watchers got it (controllers and the kubelet use this)."""
        self._listeners.append(callback)

    def pump(self) -> None:
        if self._pumping:
            self._again = True
            return
        self._pumping = True
        try:
            self._again = True
            while self._again:
                self._again = False
                changes, self._cursor = self.cluster.changes_since(self._cursor)
                self.cluster.compact(self._cursor)
                for ch in changes:
                    self._deliver(ch)
        finally:
            self._pumping = False

    def _deliver(self, ch: Change) -> None:
        rv = int(ch.obj["metadata"]["resourceVersion"])
        self.rv = max(self.rv, rv)
        hist = self._history.setdefault(ch.kind, deque())
        hist.append((rv, ch))
        while len(hist) > self.capacity:
            dropped, _ = hist.popleft()
            self._floor[ch.kind] = dropped
        for sub in self._subs:
            if sub.kind != ch.kind:
                continue
            ev = filter_change(ch, namespace=sub.namespace, labels=sub.labels, fields=sub.fields)
            if ev is not None:
                sub.queue.put_nowait(ev)
        for listener in self._listeners:
            listener(ch)

    def subscribe(self, kind: str, *, namespace: str | None, labels: Selector, fields: Selector,
                  since: int | None) -> tuple[Subscription, list[Event]]:
        """A live subscription plus the events to send first: the history after ``since``. Raises Gone when
        ``since`` is older than what the history still holds."""
        self.pump()
        backlog: list[Event] = []
        if since is not None:
            floor = self.floor(kind)
            if since < floor:
                raise Gone(f"too old resource version: {since} ({floor + 1})")
            for rv, ch in self._history.get(kind, ()):
                if rv > since:
                    ev = filter_change(ch, namespace=namespace, labels=labels, fields=fields)
                    if ev is not None:
                        backlog.append(ev)
        sub = Subscription(kind=kind, namespace=namespace, labels=labels, fields=fields)
        self._subs.append(sub)
        return sub, backlog

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)

    def compact(self, kinds: Iterable[str] | None = None) -> None:
        """Drop the history (a fault for tests: every resume from before now gets 410)."""
        for kind in list(kinds or self._history):
            self._history.pop(kind, None)
            self._floor[kind] = self.rv
        if kinds is None:
            self._floor["*"] = self.rv

    def floor(self, kind: str) -> int:
        return max(self._floor.get(kind, 0), self._floor.get("*", 0))

    def drop_watches(self) -> None:
        """End every open watch (a fault for tests: clients must re-watch)."""
        for sub in list(self._subs):
            sub.queue.put_nowait(None)
        self._subs.clear()
