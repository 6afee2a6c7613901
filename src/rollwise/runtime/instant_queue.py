"""A work queue in the manner of client-go's rate-limited queue, over an injected clock.

- ``add(key)``: the key is processed once at the current instant however often it is added before then (changes
  coalesce, as an informer's events do); a key that keeps being re-added at one instant past
  ``max_rounds_per_instant`` is a controller that does not settle, and raises;
- ``requeue_at(key, t)``: one timer per key; an earlier pending wake-up wins (the reconcile then asks again);
- ``done(key, requeue_after=..., failed=...)``: a failed reconcile backs off exponentially (doubling from
  ``backoff_start`` seconds), a successful one resets the back-off; the sooner of the requested requeue and the
  back-off is scheduled.

The ``Scheduler`` decides how time passes: the simulator's event heap (virtual time) or an asyncio loop (wall).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["AsyncioScheduler", "Scheduler", "WorkQueue"]

K = TypeVar("K", bound=Hashable)


class Scheduler(Protocol):
    """When work runs: ``now()`` in seconds, ``at(t, fn)`` to run ``fn`` at ``t`` (never earlier than now),
    ``cancel(handle)`` to drop a pending call."""

    def now(self) -> float: ...

    def at(self, t: float, fn: Callable[[], None]) -> Any: ...

    def cancel(self, handle: Any) -> None: ...


class AsyncioScheduler:
    """A ``Scheduler`` on an asyncio loop for wall-clock drivers.

    ``now()`` is ``clock()`` (epoch seconds by default, the time base of every timestamp the store writes, so a
    controller's view compares like with like); a call for time ``t`` waits ``t - now()`` on the loop's own
    monotonic timer, so a wall-clock step does not fire work early or late by the step."""

    def __init__(self, loop: asyncio.AbstractEventLoop, clock: Callable[[], float] = time.time) -> None:
        self._loop = loop
        self._clock = clock

    def now(self) -> float:
        return self._clock()

    def at(self, t: float, fn: Callable[[], None]) -> asyncio.TimerHandle:
        return self._loop.call_later(max(0.0, t - self._clock()), fn)

    def cancel(self, handle: Any) -> None:
        handle.cancel()


class WorkQueue(Generic[K]):
    """Keys waiting to be processed by ``process(key)``, de-duplicated, with requeue timers and back-off."""

    def __init__(self, scheduler: Scheduler, process: Callable[[K], None], *, backoff_start: float = 0.005,
                 backoff_max: float = 1000.0, max_rounds_per_instant: int | None = 200,
                 rounds_for: Callable[[K], int] | None = None) -> None:
        self._scheduler = scheduler
        self._process = process
        self._backoff_start = backoff_start
        self._backoff_max = backoff_max
        self._max_rounds = max_rounds_per_instant
        self._rounds_for = rounds_for  # extra rounds a key may take in one instant (a big set settles in more)
        self._queued: set[K] = set()
        self._rounds: dict[K, tuple[float, int]] = {}
        self._timers: dict[K, tuple[float, Any]] = {}
        self._backoff: dict[K, float] = {}

    def add(self, key: K) -> None:
        """Process ``key`` at the current instant (once, however often it is added before then)."""
        if key in self._queued:
            return
        t = self._scheduler.now()
        at_t, rounds = self._rounds.get(key, (t, 0))
        rounds = rounds + 1 if at_t == t else 1
        self._rounds[key] = (t, rounds)
        if (self._max_rounds is not None and rounds > self._max_rounds
                and (self._rounds_for is None or rounds > self._max_rounds + self._rounds_for(key))):
            raise RuntimeError(f"{_name(key)} did not settle at t={t}: {rounds} reconciles in one instant")
        self._queued.add(key)
        self._scheduler.at(t, lambda: self._run(key))

    def _run(self, key: K) -> None:
        self._queued.discard(key)
        self._process(key)

    def requeue_at(self, key: K, at: float) -> None:
        """Add ``key`` again at ``at``, unless an earlier wake-up is already pending."""
        current = self._timers.get(key)
        if current is not None:
            if self._scheduler.now() < current[0] <= at:
                return  # an earlier wake-up is already set; the reconcile then asks again
            self._scheduler.cancel(current[1])

        def fire() -> None:
            self._timers.pop(key, None)
            self.add(key)

        self._timers[key] = (at, self._scheduler.at(at, fire))

    def done(self, key: K, *, requeue_after: float | None, failed: bool) -> None:
        """After processing: back off on failure (reset on success) and requeue at the sooner of the two."""
        delay = requeue_after
        if failed:
            backoff = self._backoff.get(key, self._backoff_start / 2) * 2
            self._backoff[key] = min(backoff, self._backoff_max)
            delay = backoff if delay is None else min(delay, backoff)
        else:
            self._backoff.pop(key, None)
        if delay is not None:
            self.requeue_at(key, self._scheduler.now() + delay)

    def __contains__(self, key: object) -> bool:
        return key in self._queued


def _name(key: Hashable) -> str:
    if isinstance(key, tuple) and key:
        return f"StatefulSet {key[-1]}"
    return str(key)
