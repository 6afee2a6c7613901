"""Workers for the one work queue, and what a reconcile's result does to its key.

``finish`` is controller-runtime's ``reconcileHandler`` (``pkg/internal/controller/controller.go``), the one rule
every driver follows: a failed reconcile backs off per key (``add_rate_limited``), a successful one resets the
back-off (``forget``); a requested ``requeue_after`` is kept either way, and the sooner of the two wins (the queue
keeps the earliest time per key).

``InlineWorker`` takes keys on the clock's own timers, one reconcile per timer, for drivers whose world is an
in-process store (the simulator in virtual time, ``up`` on the wall clock): each key that joins the queue gets one
timer at the current instant, so keys run in the order they were added, between the driver's other timers. In
virtual time a key re-added at one instant past ``max_rounds_per_instant`` is a controller that does not settle,
and raises. The operator's asyncio workers (``workers.py``) take keys with ``get()`` and follow ``finish`` too.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from rollwise.runtime.queue import WorkQueue

__all__ = ["InlineWorker", "finish"]

K = TypeVar("K", bound=Hashable)


def finish(queue: WorkQueue[K], key: K, *, requeue_after: float | None, failed: bool) -> None:
    """After a reconcile of ``key``: back off on failure (reset on success), and look again after
    ``requeue_after`` seconds when the reconcile asked to."""
    if failed:
        queue.add_rate_limited(key)
    else:
        queue.forget(key)
    if requeue_after is not None:
        queue.add_after(key, requeue_after)


class InlineWorker(Generic[K]):
    """Runs ``process(key)`` for each key of ``queue`` on the queue's clock. ``process`` returns the reconcile's
    ``(requeue_after, failed)``. ``rounds_for(key)``: extra rounds a key may take in one instant (a big set settles
    in more)."""

    def __init__(self, queue: WorkQueue[K], process: Callable[[K], tuple[float | None, bool]], *,
                 max_rounds_per_instant: int | None = 200, rounds_for: Callable[[K], int] | None = None) -> None:
        self.queue = queue
        self.process = process
        self._max_rounds = max_rounds_per_instant
        self._rounds_for = rounds_for
        self._rounds: dict[K, tuple[float, int]] = {}
        queue.on_ready = self._soon

    def _soon(self) -> None:
        clock = self.queue.clock
        clock.call_at(clock.now(), self._run_one)

    def _run_one(self) -> None:
        queue = self.queue
        key = queue.take()
        if key is None:
            return
        try:
            if self._max_rounds is not None:
                self._count_round(key)
            requeue_after, failed = self.process(key)
            finish(queue, key, requeue_after=requeue_after, failed=failed)
        finally:
            queue.done(key)

    def _count_round(self, key: K) -> None:
        t = self.queue.clock.now()
        at_t, rounds = self._rounds.get(key, (t, 0))
        rounds = rounds + 1 if at_t == t else 1
        self._rounds[key] = (t, rounds)
        limit = self._max_rounds
        if limit is not None and rounds > limit and (
                self._rounds_for is None or rounds > limit + self._rounds_for(key)):
            raise RuntimeError(f"{_name(key)} did not settle at t={t}: {rounds} reconciles in one instant")


def _name(key: Hashable) -> str:
    if isinstance(key, tuple) and key:
        return f"StatefulSet {key[-1]}"
    return str(key)
