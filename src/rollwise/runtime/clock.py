"""Time for the runtime, injected: a wall clock for ``rollwise run`` and a virtual one for tests.

Every timing rule of the runtime (back-off, ``add_after``, lease expiry, renew deadlines) reads ``now()`` and waits
through ``call_at``/``sleep`` of a ``Clock``, so tests pin them in virtual time without a real sleep (DESIGN
principle 4). ``now()`` is monotonic seconds: lease expiry is judged on this process's own clock, never on a
remote timestamp (client-go ``tools/leaderelection/leaderelection.go``, ``observedTime``).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "TimerHandle", "VirtualClock", "WallClock"]


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""
        ...

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback`` (on the event loop) once ``now()`` reaches ``when``."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class WallClock:
    """The process's monotonic clock, driving the running asyncio loop."""

    def now(self) -> float:
        return time.monotonic()

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        loop = asyncio.get_running_loop()
        return loop.call_later(max(0.0, when - self.now()), callback)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class _VirtualTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
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

    def call_at(self, when: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _VirtualTimer(max(when, self._now), callback)
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
            timer.callback()
            await self.settle()
        self._now = max(self._now, when)
        await self.settle()

    def jump(self, when: float) -> None:
        """Stand at ``when`` without firing the timers due before it: a process that was paused (SIGSTOP) and
        has not run since, or a synchronous rule tested at one instant."""
        self._now = max(self._now, when)

    async def advance(self, seconds: float) -> None:
        await self.run_until(self._now + seconds)
