"""The store's change feed, pumped after every write, for the in-process components that react to changes.

Watches over HTTP use the store's own per-resource watches (``MemoryCluster.watch``); the wall-clock driver
(kubelet and controllers) needs more than a client sees — who wrote a change and the object before it — so it
reads the feed, as the simulator does. ``pump()`` is called by whoever wrote (the HTTP handlers, the driver);
it is re-entrant safe: a write made by a listener is delivered after the current batch.
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change

__all__ = ["FeedPump"]


class FeedPump:
    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster = cluster
        self._cursor = cluster.cursor
        self._listeners: list[Callable[[Change], None]] = []
        self._pumping = False
        self._again = False

    def listen(self, callback: Callable[[Change], None]) -> None:
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
                    for listener in self._listeners:
                        listener(ch)
        finally:
            self._pumping = False
