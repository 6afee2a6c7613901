"""The controller host: one controller's work queue and the workers that drain it, the same in every driver.

A driver hands the host a reconcile of one key and registers it with the one change dispatcher
(``runtime/dispatch.py``), which hands it the keys each change wakes by the registration row's rule (``wake``);
the host takes a key, reconciles it, and applies controller-runtime's ``reconcileHandler`` rule to the result
(``inline.finish``: back-off per key on failure, forget on success, ``requeue_after`` kept either way), over the
one ``WorkQueue``. It runs the reconcile one of two ways:

* inline, on the clock's own timers (``InlineWorker``): the reconcile is synchronous and returns
  ``(requeue_after, failed)``; the simulator in virtual time and ``up`` over its in-process store;
* on asyncio workers (``workers.Controller``): the reconcile is a coroutine that returns ``requeue_after`` and raises
  on failure (``CacheBehind``, ``NotLeader``, an API error); the operator, and a controller of ``up`` whose
  reconcile awaits I/O off the loop (an AnalysisRun's measurements).

The driver's extras are hooks, not loops: ``after_each`` (``up`` delivers the reconcile's writes to its watchers),
and, in the reconcile the driver passes, the operator's read-your-writes check, leader fence and action log.
Anchors: controller-runtime ``pkg/internal/controller/controller.go`` (``processNextWorkItem``,
``reconcileHandler``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

from rollwise.runtime.clock import Clock
from rollwise.runtime.inline import InlineWorker
from rollwise.runtime.limiter import RateLimiter
from rollwise.runtime.metrics import RuntimeMetrics
from rollwise.runtime.queue import WorkQueue
from rollwise.runtime.workers import Controller, Reconcile

__all__ = ["ControllerHost", "InlineReconcile"]

K = TypeVar("K", bound=Hashable)

InlineReconcile = Callable[[K], tuple[float | None, bool]]
"""Reconcile one key in place: when to look again (seconds, or None) and whether a write failed."""


class ControllerHost(Generic[K]):
    """Hosts one controller named ``name``: exactly one of ``inline`` (a synchronous reconcile, run on ``clock``'s
    timers) or ``awaited`` (a coroutine, run by ``workers`` asyncio tasks once ``start()`` is called).
    ``queue``: one made beforehand (the reconcile's owner adds keys to it; else the host makes one with ``limiter``
    and ``metrics``' queue hooks). ``max_rounds_per_instant``/``rounds_for``: the inline worker's settle guard
    (virtual time only)."""

    def __init__(self, name: str, *, clock: Clock, inline: InlineReconcile[K] | None = None,
                 awaited: Reconcile | None = None, queue: WorkQueue[K] | None = None,
                 limiter: RateLimiter | None = None,
                 metrics: RuntimeMetrics | None = None, workers: int = 1,
                 max_rounds_per_instant: int | None = None, rounds_for: Callable[[K], int] | None = None,
                 after_each: Callable[[], None] | None = None) -> None:
        if (inline is None) == (awaited is None):
            raise ValueError("a controller host takes exactly one of inline= and awaited=")
        self.name = name
        self.queue: WorkQueue[K] = queue if queue is not None else WorkQueue(
            clock, limiter=limiter, metrics=metrics.queue_hooks(name) if metrics is not None else None)
        self._inline = inline
        self._after_each = after_each
        self._stopped = False
        self._worker: InlineWorker[K] | None = None
        self._controller: Controller | None = None
        if inline is not None:
            self._worker = InlineWorker(self.queue, self._process, max_rounds_per_instant=max_rounds_per_instant,
                                        rounds_for=rounds_for)
        else:
            assert awaited is not None
            self._controller = Controller(name, self._awaited(awaited), clock=clock,
                                          queue=self.queue,  # type: ignore[arg-type]
                                          metrics=metrics, workers=workers)

    @property
    def controller(self) -> Controller | None:
        """The asyncio workers (``awaited`` hosts), for a driver that awaits their stop with a grace period."""
        return self._controller

    def wake(self, key: K) -> None:
        if not self._stopped:
            self.queue.add(key)

    def wake_all(self, keys: Iterable[K]) -> None:
        for key in keys:
            self.wake(key)

    def start(self) -> None:
        """Start the asyncio workers (an ``awaited`` host; an inline one runs as keys arrive)."""
        if self._controller is not None:
            self._controller.start()

    def stop(self) -> None:
        """Take no more keys and run none of those waiting; asyncio workers are cancelled (the operator awaits
        ``controller.stop`` instead, to let in-flight reconciles finish)."""
        self._stopped = True
        self.queue.shutdown()
        if self._controller is not None:
            self._controller.cancel()

    async def drain(self, *, grace_seconds: float) -> None:
        """Stop taking keys and let in-flight reconciles finish within ``grace_seconds`` (the operator's
        shutdown), then cancel the rest."""
        self._stopped = True
        if self._controller is not None:
            await self._controller.stop(grace_seconds=grace_seconds)
        else:
            self.queue.shutdown()

    def _process(self, key: K) -> tuple[float | None, bool]:
        if self._stopped:
            return None, False
        assert self._inline is not None
        try:
            return self._inline(key)
        finally:
            if self._after_each is not None:
                self._after_each()

    def _awaited(self, reconcile: Reconcile) -> Reconcile:
        if self._after_each is None:
            return reconcile
        after = self._after_each

        async def run(key: Hashable) -> float | None:
            try:
                return await reconcile(key)
            finally:
                after()

        return run
