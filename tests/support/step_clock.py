"""A ``runtime.clock.Clock`` for tests: timers fire in time order (ties in the order set) only when a test runs
them, each followed by ``after_each`` (a driver delivers its store's changes there)."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any

__all__ = ["StepClock"]


class _Timer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class StepClock:
    """A ``runtime.clock.Clock`` whose timers fire, in time order, only when a test runs them."""

    def __init__(self) -> None:
        self.t = 0.0
        self._heap: list[tuple[float, int, _Timer, Callable[..., None], tuple[Any, ...]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self.t

    def call_at(self, when: float, callback: Callable[..., None], *args: Any) -> _Timer:
        timer = _Timer()
        heapq.heappush(self._heap, (max(when, self.t), next(self._seq), timer, callback, args))
        return timer

    def live(self) -> list[float]:
        return sorted(t for t, _, timer, _, _ in self._heap if not timer.cancelled)

    def run_until(self, end: float, after_each: Callable[[], None]) -> None:
        while self._heap and self._heap[0][0] <= end:
            t, _, timer, callback, args = heapq.heappop(self._heap)
            if timer.cancelled:
                continue
            self.t = t
            callback(*args)
            after_each()
        self.t = end
