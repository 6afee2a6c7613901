"""Per-resource watches over the store: a bounded history per resource, selectors, bookmarks and ``Gone``.

What the API server's watch cache does, as far as a client can tell (reference kubectl-wire.md §4.4 item 3):

- each resource keeps the last ``limit`` changes; a watch from resourceVersion N replays the changes after N, and
  answers ``Gone`` (410 "too old resource version") when changes after N were already compacted away;
- a watch without a resourceVersion (or ``"0"``) starts with a synthetic ADDED for every current object;
- label and field selectors apply to each change as upstream's cacher applies them: an object that starts
  matching arrives as ADDED, one that stops matching as DELETED (its previous state, with the resourceVersion of
  the change that made it stop), so an informer with a selector forgets it;
- a BOOKMARK carries only the current resourceVersion, for clients that asked for bookmarks.

Consumers never learn who wrote a change: a watch event is a type and an object, as on the wire.
"""

from __future__ import annotations

import builtins
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from rollwise.api.errors import BadRequest, Gone
from rollwise.api.meta import Obj, labels
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import GroupKind, Resource
from rollwise.cluster.store.selectors import FieldSelector, LabelSelector

__all__ = ["DEFAULT_HISTORY_LIMIT", "Watch", "WatchEvent", "WatchEventType", "WatchHub", "parse_resource_version"]

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]
DEFAULT_HISTORY_LIMIT = 1000
DEFAULT_MAX_PENDING = 10_000
"""Events a watch may hold undelivered; a consumer that falls further behind is closed (it re-watches from the
last resourceVersion it saw), as the API server's cacher closes a watcher whose buffer is full."""


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One watch event: ``type`` and ``object`` as on the wire, and the event's resourceVersion as an int."""

    type: WatchEventType
    object: Obj
    resource_version: int


class Watch:
    """One open watch. The store queues matching events as writes happen; ``drain()`` takes them.

    ``notify`` (if set) is called, synchronously inside the write, each time events were queued: an async server
    sets an ``asyncio.Event`` there. A watch closed by ``close()``, by the store (``WatchHub.drop``) or because
    its consumer fell ``DEFAULT_MAX_PENDING`` events behind queues nothing more; ``closed`` says so, and the
    consumer ends its stream once it has drained what is queued.
    """

    __slots__ = ("_current_rv", "_hub", "_pending", "closed", "fields", "labels", "namespace", "notify", "resource")

    def __init__(self, hub: WatchHub, resource: Resource, namespace: str | None, label_selector: LabelSelector,
                 field_selector: FieldSelector, current_rv: Callable[[], int]) -> None:
        self._hub = hub
        self.resource = resource
        self.namespace = namespace
        self.labels = label_selector
        self.fields = field_selector
        self._current_rv = current_rv
        self._pending: deque[WatchEvent] = deque()
        self.notify: Callable[[], None] | None = None
        self.closed = False

    def drain(self) -> builtins.list[WatchEvent]:
        """The events queued since the last call, oldest first."""
        out = list(self._pending)
        self._pending.clear()
        return out

    def bookmark(self) -> WatchEvent:
        """A BOOKMARK at the store's current resourceVersion (send it only when the client allowed bookmarks)."""
        rv = self._current_rv()
        row = self.resource
        obj: Obj = {"apiVersion": row.api_version, "kind": row.kind, "metadata": {"resourceVersion": str(rv)}}
        return WatchEvent("BOOKMARK", obj, rv)

    def close(self) -> None:
        """Stop queueing events; the consumer is woken (``notify``) to end its stream."""
        if not self.closed:
            self.closed = True
            self._hub._forget(self)
            if self.notify is not None:
                self.notify()

    def matches(self, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        if self.namespace is not None and (meta.get("namespace") or "") != self.namespace:
            return False
        return self.labels.matches(labels(obj)) and self.fields.matches(obj)

    def _offer(self, change: Change, rv: int) -> bool:
        event = translate(change, rv, self.matches)
        return event is not None and self._queue(event)

    def _queue(self, event: WatchEvent) -> bool:
        if len(self._pending) >= self._hub.max_pending:
            self.close()
            return False
        self._pending.append(event)
        return True


_UNSEEN = WatchEvent("BOOKMARK", {}, -1)
"""Not yet translated for a filter (None is taken: that filter's watches see no event)."""


def translate(change: Change, rv: int, matches: Callable[[Obj], bool]) -> WatchEvent | None:
    """The event a watcher with this filter sees for a change, or None (upstream's cacher rules)."""
    if change.type == "DELETED":
        return WatchEvent("DELETED", change.obj, rv) if matches(change.obj) else None
    now_ok = matches(change.obj)
    was_ok = change.type == "MODIFIED" and change.old is not None and matches(change.old)
    if now_ok:
        return WatchEvent("MODIFIED" if was_ok else "ADDED", change.obj, rv)
    if was_ok:
        assert change.old is not None
        last = {**change.old, "metadata": {**change.old["metadata"], "resourceVersion": str(rv)}}
        return WatchEvent("DELETED", last, rv)
    return None


def parse_resource_version(since: str | int | None) -> int | None:
    """A watch's starting resourceVersion: None for "from the current state" (unset, ``""`` or ``"0"``, as the
    API server reads them), else a non-negative int. BadRequest for anything else."""
    if since in (None, "", "0", 0):
        return None
    try:
        start = int(str(since))
    except ValueError:
        raise BadRequest(f"invalid resourceVersion: {since!r}") from None
    if start < 0:
        raise BadRequest(f"invalid resourceVersion: {since!r}")
    return start


class _History:
    __slots__ = ("events", "floor")

    def __init__(self, limit: int, floor: int) -> None:
        self.events: deque[tuple[int, Change]] = deque(maxlen=limit)
        self.floor = floor
        """Changes at or below this resourceVersion may be lost: a watch must start at or after it."""


class WatchHub:
    """The per-resource histories and the open watches of one store."""

    def __init__(self, *, limit: int = DEFAULT_HISTORY_LIMIT, floor: int = 0,
                 max_pending: int = DEFAULT_MAX_PENDING) -> None:
        if limit < 0 or max_pending < 1:
            raise ValueError("the watch history limit must not be negative, and max_pending must be at least 1")
        self.limit = limit
        self.max_pending = max_pending
        self._floor = floor  # for resources with no history yet: the store's resourceVersion when it opened
        self._histories: dict[GroupKind, _History] = {}
        self._watches: dict[GroupKind, builtins.list[Watch]] = {}

    def record(self, gk: GroupKind, rv: int, change: Change) -> None:
        """Keep a committed change and queue it to the matching watches."""
        if self.limit:
            history = self._histories.get(gk)
            if history is None:
                history = self._histories[gk] = _History(self.limit, self._floor)
            events = history.events
            if len(events) == self.limit:
                history.floor = events[0][0]
            events.append((rv, change))
        else:  # no history (the simulator reads the change feed, not watches): a watch may start only from now
            self._floor = rv
        watches = self._watches.get(gk)
        if watches:
            # Watches with the same filter see the same event: it is made once for them (an API server's hundred
            # informers of one resource mostly share their filter), and an event is immutable.
            shared: dict[tuple[str | None, LabelSelector, FieldSelector], WatchEvent | None] = {}
            for watch in list(watches):
                key = (watch.namespace, watch.labels, watch.fields)
                event = shared.get(key, _UNSEEN)
                if event is _UNSEEN:
                    event = shared[key] = translate(change, rv, watch.matches)
                if event is not None and watch._queue(event) and watch.notify is not None:
                    watch.notify()

    def open(self, resource: Resource, *, namespace: str | None, since: int | None, label_selector: LabelSelector,
             field_selector: FieldSelector, current: Iterable[Obj], current_rv: Callable[[], int]) -> Watch:
        """A new watch: from ``since`` (replayed from history; Gone if compacted past), or from the current state
        (``since`` None: synthetic ADDED for each object in ``current`` that matches)."""
        gk = resource.group_kind
        watch = Watch(self, resource, namespace, label_selector, field_selector, current_rv)
        if since is None:
            for obj in current:
                if watch.matches(obj):
                    watch._pending.append(WatchEvent("ADDED", obj, int(obj["metadata"]["resourceVersion"])))
        else:
            history = self._histories.get(gk)
            floor = history.floor if history is not None else self._floor
            if since < floor:
                raise Gone(f"too old resource version: {since} ({floor})")
            if history is not None:
                newer = []
                for rv, change in reversed(history.events):  # from the newest: a watch usually starts near now
                    if rv <= since:
                        break
                    newer.append((rv, change))
                for rv, change in reversed(newer):
                    watch._offer(change, rv)
        self._watches.setdefault(gk, []).append(watch)
        return watch

    def compact(self, rv: int, gk: GroupKind | None = None) -> None:
        """Forget the changes at or below ``rv`` (of one resource, or all): later watches from before it get Gone."""
        if gk is None:
            self._floor = max(self._floor, rv)
        elif gk not in self._histories:
            self._histories[gk] = _History(self.limit, max(self._floor, rv))
        for key, history in self._histories.items():
            if gk is not None and key != gk:
                continue
            while history.events and history.events[0][0] <= rv:
                history.events.popleft()
            history.floor = max(history.floor, rv)

    def drop(self, gk: GroupKind | None = None) -> int:
        """Close every open watch (of one resource, or all), as a restarting API server does; returns how many."""
        dropped = [w for key, ws in self._watches.items() if gk is None or key == gk for w in ws]
        for watch in dropped:
            watch.close()
        return len(dropped)

    def watching(self, gk: GroupKind) -> int:
        return len(self._watches.get(gk, ()))

    def _forget(self, watch: Watch) -> None:
        watches = self._watches.get(watch.resource.group_kind)
        if watches is not None and watch in watches:
            watches.remove(watch)
