"""The shape of `rollwise up`'s scheduler (kube-scheduler's part; the controllers run on the runtime's controller
host, local/hosted.py): a change in the store
marks work, and the work is done once on the next turn of the event loop, however many changes marked it; the
controller's own writes mark nothing; the feed is pumped after each turn so watchers see the writes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change

__all__ = ["LoopTurn"]


class LoopTurn:
    """``start()`` on the running loop, ``stop()`` before the store closes. A subclass names its ``actor`` and says
    what a change marks (``_changed``), what starting marks (``_started``) and what a turn does (``_turn``)."""

    actor = ""

    def __init__(self, cluster: MemoryCluster, *, listen: Callable[[Callable[[Change], None]], None],
                 pump: Callable[[], None], clock: Callable[[], float]) -> None:
        self.cluster = cluster
        self.pump = pump
        self.clock = clock
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scheduled = False
        listen(self._on_change)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._started()

    def stop(self) -> None:
        self._loop = None

    @property
    def running(self) -> bool:
        return self._loop is not None

    def _on_change(self, ch: Change) -> None:
        if self._loop is not None and ch.actor != self.actor:
            self._changed(ch)

    def _soon(self) -> None:
        """Do a turn on the next loop turn (once, however often it is asked for before then)."""
        if not self._scheduled and self._loop is not None:
            self._scheduled = True
            self._loop.call_soon(self._run_turn)

    def _run_turn(self) -> None:
        self._scheduled = False
        if self._loop is None:
            return
        self._turn()
        self.pump()

    def _started(self) -> None:
        self._soon()

    def _changed(self, ch: Change) -> None:
        raise NotImplementedError

    def _turn(self) -> None:
        raise NotImplementedError
