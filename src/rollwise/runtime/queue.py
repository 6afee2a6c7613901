"""The controller work queue: de-duplicating, delaying and rate-limited, as client-go's (``util/workqueue``).

* ``queue.go``: a key waiting in the queue is held once (``dirty``); a key being processed is never handed out
  again until ``done`` (``processing``); an ``add`` during processing is remembered and queued again at ``done``.
* ``delaying_queue.go``: ``add_after`` keeps the earliest time per key on a heap, with one timer armed.
* ``rate_limiting_queue.go``: ``add_rate_limited`` waits as the limiter says; ``forget`` resets the back-off.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Hashable
from typing import Protocol

from rollwise.runtime.clock import Clock, TimerHandle
from rollwise.runtime.limiter import RateLimiter, default_controller_rate_limiter

__all__ = ["QueueMetrics", "QueueShutDown", "WorkQueue"]


class QueueShutDown(Exception):
    """``get`` on a queue that was shut down and has nothing left to hand out."""


class QueueMetrics(Protocol):
    """Hooks for the ``workqueue_*`` metrics (controller-runtime ``pkg/metrics/workqueue.go``)."""

    def added(self, depth: int) -> None: ...

    def started(self, depth: int, waited_seconds: float) -> None: ...

    def finished(self, worked_seconds: float) -> None: ...

    def retried(self) -> None: ...


class WorkQueue:
    def __init__(self, clock: Clock, *, limiter: RateLimiter | None = None,
                 metrics: QueueMetrics | None = None) -> None:
        self.clock = clock
        self.limiter = limiter if limiter is not None else default_controller_rate_limiter(clock.now)
        self.metrics = metrics
        self._queue: deque[Hashable] = deque()
        self._dirty: set[Hashable] = set()
        self._processing: dict[Hashable, float] = {}  # key -> when its processing started
        self._added_at: dict[Hashable, float] = {}
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._waiting: list[tuple[float, int, Hashable]] = []  # heap of (ready at, seq, key)
        self._ready_at: dict[Hashable, float] = {}
        self._seq = itertools.count()
        self._timer: TimerHandle | None = None
        self._timer_at: float | None = None
        self._shutting_down = False

    # -- the basic queue -------------------------------------------------------------------------------------

    def add(self, key: Hashable) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        self._added_at.setdefault(key, self.clock.now())
        if key in self._processing:
            return  # queued again at done()
        self._queue.append(key)
        if self.metrics is not None:
            self.metrics.added(len(self._queue))
        self._wake_one()

    async def get(self) -> Hashable:
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
        key = self._queue.popleft()
        self._dirty.discard(key)
        now = self.clock.now()
        self._processing[key] = now
        waited = now - self._added_at.pop(key, now)
        if self.metrics is not None:
            self.metrics.started(len(self._queue), waited)
        return key

    def done(self, key: Hashable) -> None:
        started = self._processing.pop(key, None)
        if started is not None and self.metrics is not None:
            self.metrics.finished(self.clock.now() - started)
        if key in self._dirty:
            self._queue.append(key)
            if self.metrics is not None:
                self.metrics.added(len(self._queue))
            self._wake_one()

    def __len__(self) -> int:
        return len(self._queue)

    def is_processing(self, key: Hashable) -> bool:
        return key in self._processing

    def processing_started(self) -> list[float]:
        """When each in-flight key started (for the unfinished-work and longest-running gauges)."""
        return list(self._processing.values())

    def shutdown(self) -> None:
        """Stop taking keys; workers drain what is queued, then ``get`` raises QueueShutDown."""
        self._shutting_down = True
        if self._timer is not None:
            self._timer.cancel()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    # -- delaying --------------------------------------------------------------------------------------------

    def add_after(self, key: Hashable, seconds: float) -> None:
        """Add ``key`` once ``seconds`` have passed; an earlier pending time for the same key wins."""
        if self._shutting_down:
            return
        if seconds <= 0:
            self.add(key)
            return
        at = self.clock.now() + seconds
        pending = self._ready_at.get(key)
        if pending is not None and pending <= at:
            return
        self._ready_at[key] = at
        heapq.heappush(self._waiting, (at, next(self._seq), key))
        self._arm()

    def waiting(self) -> dict[Hashable, float]:
        """Keys waiting for their time, and when each becomes ready."""
        return dict(self._ready_at)

    def _arm(self) -> None:
        while self._waiting and self._ready_at.get(self._waiting[0][2]) != self._waiting[0][0]:
            heapq.heappop(self._waiting)  # superseded by an earlier time for the same key
        if not self._waiting:
            return
        at = self._waiting[0][0]
        if self._timer_at is not None and self._timer_at <= at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = at
        self._timer = self.clock.call_at(at, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._timer_at = None
        now = self.clock.now()
        while self._waiting and self._waiting[0][0] <= now:
            at, _, key = heapq.heappop(self._waiting)
            if self._ready_at.get(key) == at:
                del self._ready_at[key]
                self.add(key)
        self._arm()

    # -- rate limiting ---------------------------------------------------------------------------------------

    def add_rate_limited(self, key: Hashable) -> None:
        if self.metrics is not None:
            self.metrics.retried()
        self.add_after(key, self.limiter.when(key))

    def forget(self, key: Hashable) -> None:
        self.limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return self.limiter.num_requeues(key)
