"""The store's change feed, pumped after every write, for the in-process components that react to changes.

Watches over HTTP use the store's own per-resource watches (``MemoryCluster.watch``); the wall-clock driver
(kubelet and controllers) needs more than a client sees — who wrote a change and the object before it — so it
reads the feed, as the simulator does. ``pump()`` is called by whoever wrote (the HTTP handlers, the driver);
it is re-entrant safe: a write made by a listener is delivered after the current batch.

A listener that raises does not undo or fail the write that fed it: kube-apiserver answers a write once it is
persisted, and the controllers that watch react on their own (client-go's ``processorListener`` runs each handler
apart from the others). The error goes to the log, once with its traceback; the same error from the same listener
again is logged at debug level only; the change still reaches every other listener, and later changes reach them
all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from rollwise.cluster.protocol import Change
from rollwise.cluster.store.memory import MemoryCluster

__all__ = ["FeedPump"]

log = logging.getLogger("rollwise.feed")


class FeedPump:
    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster = cluster
        self._cursor = cluster.cursor
        self._listeners: list[Callable[[Change], None]] = []
        self._pumping = False
        self._again = False
        self._failed: set[tuple[str, str, str]] = set()
        """(listener, error type, message) already logged with a traceback."""

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
                        self._deliver(listener, ch)
        finally:
            self._pumping = False

    def _deliver(self, listener: Callable[[Change], None], ch: Change) -> None:
        try:
            listener(ch)
        except Exception as err:  # a reaction's bug: logged, and neither the write nor the other listeners fail
            name = getattr(listener, "__qualname__", repr(listener))
            key = (name, type(err).__name__, str(err))
            where = f"{ch.kind} {ch.namespace}/{ch.name}" if ch.namespace else f"{ch.kind} {ch.name}"
            if key in self._failed:
                log.debug("%s failed again on %s: %s: %s", name, where, type(err).__name__, err)
                return
            self._failed.add(key)
            log.exception("%s failed on %s (the write stands; the same error again is logged at debug level)",
                          name, where)
