"""Time for the runtime, injected: one clock protocol for virtual and wall time (DESIGN principle 4).

Every timing rule of the runtime (requeues, back-off, lease expiry, renew deadlines, the kubelet's wake-ups) reads
``now()`` and waits through ``call_at``, so the same code runs in the simulator's virtual time and on the wall clock,
SimPy-style: only ``now`` and how a timer fires change. A timer carries its callback's arguments, as asyncio's
``call_at`` does: a large simulated run keeps a timer for most of its pods, and a closure per timer would be objects
more to make and to read back when it fires (``sim/engine.py``). ``AsyncClock`` adds ``sleep`` for the coroutines
of a driver over a real API (informers, leader election, the event recorder).

- ``WallClock``: the process's monotonic clock on the running asyncio loop (the operator). Lease expiry is judged on
  this process's own clock, never on a remote timestamp (client-go ``tools/leaderelection``, ``observedTime``).
- ``EpochClock``: wall time in epoch seconds on an asyncio loop (``rollwise up``): the time base of every timestamp
  its store writes, so a controller's view compares like with like; a timer for ``t`` waits ``t - now()`` on the
  loop's own monotonic timer, so a step of the wall clock fires nothing early or late by the step. It remembers
  its pending timers, so a driver that stops cancels every one (``cancel_all``).
- ``VirtualClock``: virtual seconds on an asyncio loop that move only when a test says (``advance``).
- The simulator's engine clock (``sim/loop.py``) puts each timer at its controller phase in the engine's calendar.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVarTuple

__all__ = ["AsyncClock", "Clock", "EpochClock", "TimerHandle", "VirtualClock", "WallClock"]

_Ts = TypeVarTuple("_Ts")


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Seconds; never goes back."""
        ...

    def call_at(self, when: float, callback: Callable[[*_Ts], None], *args: *_Ts) -> TimerHandle:
        """Run ``callback(*args)`` once ``now()`` reaches ``when`` (at once, after what is already due, if it has)."""
        ...


class AsyncClock(Clock, Protocol):
    async def sleep(self, seconds: float) -> None: ...


class WallClock:
    """The process's monotonic clock, driving the running asyncio loop."""

    def now(self) -> float:
        return time.monotonic()

    def call_at(self, when: float, callback: Callable[[*_Ts], None], *args: *_Ts) -> TimerHandle:
        loop = asyncio.get_running_loop()
        return loop.call_later(max(0.0, when - self.now()), callback, *args)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class EpochClock:
    """Epoch seconds (``time_source``, ``time.time`` by default) with timers on ``loop``'s own monotonic timer."""

    def __init__(self, loop: asyncio.AbstractEventLoop, time_source: Callable[[], float] = time.time) -> None:
        self._loop = loop
        self._time = time_source
        self._handles: set[asyncio.TimerHandle] = set()

    def now(self) -> float:
        return self._time()

    def call_at(self, when: float, callback: Callable[[*_Ts], None], *args: *_Ts) -> TimerHandle:
        def run() -> None:
            self._handles.discard(handle)
            callback(*args)

        handle = self._loop.call_later(max(0.0, when - self._time()), run)
        self._handles.add(handle)
        return handle

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def cancel_all(self) -> None:
        """Cancel every pending timer (the driver stops)."""
        for handle in list(self._handles):
            handle.cancel()
        self._handles.clear()


class _VirtualTimer:
    __slots__ = ("args", "callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.when = when
        self.callback = callback
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    """Virtual seconds that move only when a test calls ``advance``/``run_until``.

    Timers fire in time order (ties in the order they were set); after each, the event loop runs until every task
    it woke has gone back to waiting, so a chain of coroutines settles at one virtual instant.
    """

    SETTLE_ROUNDS = 64

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _VirtualTimer]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def call_at(self, when: float, callback: Callable[[*_Ts], None], *args: *_Ts) -> TimerHandle:
        timer = _VirtualTimer(max(when, self._now), callback, args)
        heapq.heappush(self._timers, (timer.when, next(self._seq), timer))
        return timer

    async def sleep(self, seconds: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        timer = self.call_at(self._now + max(0.0, seconds), wake)
        try:
            await future
        finally:
            timer.cancel()

    def next_timer(self) -> float | None:
        """When the earliest live timer fires, or None."""
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    async def settle(self) -> None:
        """Let every runnable task run until it waits again (on a timer or a queue)."""
        for _ in range(self.SETTLE_ROUNDS):
            await asyncio.sleep(0)

    async def run_until(self, when: float) -> None:
        """Fire every timer due up to ``when``, in order, settling after each; then stand at ``when``."""
        await self.settle()
        while (due := self.next_timer()) is not None and due <= when:
            _, _, timer = heapq.heappop(self._timers)
            self._now = max(self._now, timer.when)
            timer.callback(*timer.args)
            await self.settle()
        self._now = max(self._now, when)
        await self.settle()

    def jump(self, when: float) -> None:
        """Stand at ``when`` without firing the timers due before it: a process that was paused (SIGSTOP) and
        has not run since, or a synchronous rule tested at one instant."""
        self._now = max(self._now, when)

    async def advance(self, seconds: float) -> None:
        await self.run_until(self._now + seconds)
