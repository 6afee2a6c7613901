"""The one controller work queue: de-duplicating, delaying and rate-limited, as client-go's (``util/workqueue``).

* ``queue.go``: a key waiting in the queue is held once (``dirty``); a key being processed is never handed out
  again until ``done`` (``processing``); an ``add`` during processing is remembered and queued again at ``done``.
* ``delaying_queue.go``: ``add_after`` keeps the earliest time per key (a later one is ignored, an earlier one
  replaces it), one timer per waiting key on the injected ``Clock``.
* ``rate_limiting_queue.go``: ``add_rate_limited`` waits as the limiter says; ``forget`` resets the back-off.

Two ways to take keys out, one per kind of world: ``get()`` for asyncio workers over a real API
(``runtime/workers.py``), and ``take()`` for a worker that runs on the clock's own timers over an in-process store
(``runtime/inline.py``: the simulator and ``up``). ``on_ready`` tells such a worker that a key is waiting.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

from rollwise.runtime.clock import Clock, TimerHandle
from rollwise.runtime.limiter import RateLimiter, default_controller_rate_limiter

__all__ = ["QueueMetrics", "QueueShutDown", "WorkQueue"]

K = TypeVar("K", bound=Hashable)


class QueueShutDown(Exception):
    """``get`` on a queue that was shut down and has nothing left to hand out."""


class QueueMetrics(Protocol):
    """Hooks for the ``workqueue_*`` metrics (controller-runtime ``pkg/metrics/workqueue.go``)."""

    def added(self, depth: int) -> None: ...

    def started(self, depth: int, waited_seconds: float) -> None: ...

    def finished(self, worked_seconds: float) -> None: ...

    def retried(self) -> None: ...


class WorkQueue(Generic[K]):
    """Keys of objects to reconcile, each held once however often it is added, never handed to two workers at once,
    with delayed adds (``add_after``/``add_at``: the earliest time wins) and per-key back-off (``add_rate_limited``,
    ``forget``), on the injected ``Clock`` (the module docstring maps each to client-go). A worker takes a key with
    ``take()`` (on the clock's timers) or ``await get()`` (asyncio), reconciles it, and calls ``done(key)``; a key
    added meanwhile is queued again then."""

    def __init__(self, clock: Clock, *, limiter: RateLimiter | None = None,
                 metrics: QueueMetrics | None = None) -> None:
        self.clock = clock
        self.limiter = limiter if limiter is not None else default_controller_rate_limiter(clock.now)
        self.metrics = metrics
        self.on_ready: Callable[[], None] | None = None
        """Called each time a key joins the queue, for a worker that runs on the clock's timers."""
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: dict[K, float] = {}  # key -> when its processing started
        self._added_at: dict[K, float] = {}
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._delayed: dict[K, tuple[float, TimerHandle]] = {}
        self._shutting_down = False

    # -- the basic queue -------------------------------------------------------------------------------------

    def add(self, key: K) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if self.metrics is not None:
            self._added_at.setdefault(key, self.clock.now())
        if key in self._processing:
            return  # queued again at done()
        self._push(key)

    def _push(self, key: K) -> None:
        self._queue.append(key)
        if self.metrics is not None:
            self.metrics.added(len(self._queue))
        if self.on_ready is not None:
            self.on_ready()
        if self._waiters:
            self._wake_one()

    def take(self) -> K | None:
        """The next key, marked as processing, or None when none waits (a worker on the clock's timers)."""
        if not self._queue:
            return None
        key = self._queue.popleft()
        self._dirty.discard(key)
        now = self.clock.now()
        self._processing[key] = now
        if self.metrics is not None:
            self.metrics.started(len(self._queue), now - self._added_at.pop(key, now))
        return key

    async def get(self) -> K:
        """The next key, marked as processing. Raises QueueShutDown once shut down and drained."""
        while not self._queue:
            if self._shutting_down:
                raise QueueShutDown
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        key = self.take()
        assert key is not None
        return key

    def done(self, key: K) -> None:
        started = self._processing.pop(key, None)
        if started is not None and self.metrics is not None:
            self.metrics.finished(self.clock.now() - started)
        if key in self._dirty:
            self._push(key)

    def __len__(self) -> int:
        return len(self._queue)

    def __contains__(self, key: object) -> bool:
        """Waiting to be handed out (not merely delayed, nor only in processing)."""
        return key in self._dirty

    def is_processing(self, key: K) -> bool:
        return key in self._processing

    def processing_started(self) -> list[float]:
        """When each in-flight key started (for the unfinished-work and longest-running gauges)."""
        return list(self._processing.values())

    def shutdown(self) -> None:
        """Stop taking keys; workers drain what is queued, then ``get`` raises QueueShutDown."""
        self._shutting_down = True
        for _, timer in self._delayed.values():
            timer.cancel()
        self._delayed.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    # -- delaying --------------------------------------------------------------------------------------------

    def add_after(self, key: K, seconds: float) -> None:
        """Add ``key`` once ``seconds`` have passed; an earlier pending time for the same key wins."""
        if seconds > 0:
            self.add_at(key, self.clock.now() + seconds)
        else:
            self.add(key)

    def add_at(self, key: K, at: float) -> None:
        """Add ``key`` at ``at``, unless an earlier time is already pending for it (the reconcile then asks
        again); a pending later time is replaced."""
        if self._shutting_down:
            return
        pending = self._delayed.get(key)
        if pending is not None:
            if self.clock.now() < pending[0] <= at:
                return
            pending[1].cancel()

        def fire() -> None:
            self._delayed.pop(key, None)
            self.add(key)

        self._delayed[key] = (at, self.clock.call_at(at, fire))

    def waiting(self) -> dict[K, float]:
        """Keys waiting for their time, and when each becomes ready."""
        return {key: at for key, (at, _) in self._delayed.items()}

    # -- rate limiting ---------------------------------------------------------------------------------------

    def add_rate_limited(self, key: K) -> None:
        if self.metrics is not None:
            self.metrics.retried()
        self.add_after(key, self.limiter.when(key))

    def forget(self, key: K) -> None:
        self.limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self.limiter.num_requeues(key)
