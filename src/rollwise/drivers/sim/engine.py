"""A deterministic discrete-event engine: a heap of ``(t, phase, seq)`` (after SimPy's event queue).

``phase`` orders work at one instant — the kubelet, then scenario steps, then controllers — and ``seq`` breaks
the remaining ties in the order work was scheduled, so a run is the same every time. Timers can be cancelled; a
run is idle when no live timer remains.
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
    _cancelled: set[int] = field(default_factory=set)

    def at(self, t: float, phase: int, fn: Callable[[], None]) -> int:
        """Run ``fn`` at virtual time ``t`` (never earlier than now); returns a handle for ``cancel``."""
        seq = next(self._seq)
        heapq.heappush(self._heap, (max(t, self.clock.now), phase, seq, fn))
        return seq

    def cancel(self, handle: int) -> None:
        self._cancelled.add(handle)

    def _skip_cancelled(self) -> None:
        while self._heap and self._heap[0][2] in self._cancelled:
            self._cancelled.discard(heapq.heappop(self._heap)[2])

    def next_time(self) -> float | None:
        self._skip_cancelled()
        return self._heap[0][0] if self._heap else None

    def run_instant(self, after_each: Callable[[], None], *, below_phase: int | None = None) -> None:
        """Advance to the next scheduled instant and run everything due then, including work scheduled meanwhile
        for the same instant; ``after_each`` runs after every item (the driver drains the change feed there).

        With ``below_phase``, only work of lower phases runs (the rest stays queued): ``rollwise plan`` uses it to
        stop an instant just before the controllers act."""
        t = self.next_time()
        if t is None:
            return
        self.clock.now = t
        heap, cancelled = self._heap, self._cancelled
        while True:
            if cancelled:
                self._skip_cancelled()
            if not heap or heap[0][0] > t:
                return
            if below_phase is not None and heap[0][1] >= below_phase:
                return
            heapq.heappop(heap)[3]()
            after_each()

    def __bool__(self) -> bool:
        return self.next_time() is not None
