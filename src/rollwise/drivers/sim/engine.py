"""A deterministic discrete-event engine: a heap of ``(t, phase, seq)`` (after SimPy's event queue).

``phase`` orders work at one instant — the kubelet, then scenario steps, then controllers — and ``seq`` breaks
the remaining ties in the order work was scheduled, so a run is the same every time.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["CONTROLLER", "KUBELET", "STEP", "Engine", "VirtualClock"]

KUBELET = 0
STEP = 1
CONTROLLER = 2


@dataclass(slots=True)
class VirtualClock:
    """Virtual seconds since the scenario started. Only the engine moves it."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(slots=True)
class Engine:
    clock: VirtualClock = field(default_factory=VirtualClock)
    _heap: list[tuple[float, int, int, Callable[[], None]]] = field(default_factory=list)
    _seq: itertools.count[int] = field(default_factory=itertools.count)

    def at(self, t: float, phase: int, fn: Callable[[], None]) -> None:
        """Run ``fn`` at virtual time ``t`` (never earlier than now)."""
        heapq.heappush(self._heap, (max(t, self.clock.now), phase, next(self._seq), fn))

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def run_instant(self, after_each: Callable[[], None]) -> None:
        """Advance to the next scheduled instant and run everything due then, including work scheduled meanwhile
        for the same instant; ``after_each`` runs after every item (the driver drains the change feed there)."""
        if not self._heap:
            return
        self.clock.now = self._heap[0][0]
        while self._heap and self._heap[0][0] <= self.clock.now:
            _, _, _, fn = heapq.heappop(self._heap)
            fn()
            after_each()

    def __bool__(self) -> bool:
        return bool(self._heap)
