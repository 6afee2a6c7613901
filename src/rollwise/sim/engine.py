"""A deterministic discrete-event engine: work runs in ``(t, phase, seq)`` order (after SimPy's event queue).

``phase`` orders work at one instant — the kubelet, then scenario steps, then controllers — and ``seq`` breaks
the remaining ties in the order work was scheduled, so a run is the same every time. Timers can be cancelled; a
run is idle when no live timer remains.

The queue is a calendar rather than one heap of timers: a heap of the distinct instants, and per instant one FIFO
per phase. Work at one instant and phase is already in ``seq`` order when appended (``seq`` only grows), so the
order is the heap's, while a large run's timers share a few instants (a wave of a thousand pods started together
wakes together): a timer is an append and a pop, where one heap of every timer sifted through a dozen levels of
tuples scattered over a heap too large for the caches (bench/scale.py, 10,000 replicas).
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CONTROLLER", "KUBELET", "STEP", "Engine", "VirtualClock"]

KUBELET = 0
STEP = 1
CONTROLLER = 2
_PHASES = 3

_Timer = tuple[int, Callable[..., None], tuple[Any, ...]]
"""(seq, work, its arguments)."""


@dataclass(slots=True)
class VirtualClock:
    """Virtual seconds since the scenario started. Only the engine moves it."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(slots=True)
class Engine:
    clock: VirtualClock = field(default_factory=VirtualClock)
    _times: list[float] = field(default_factory=list)
    """A heap of the instants ``_due`` holds."""
    _due: dict[float, list[deque[_Timer] | None]] = field(default_factory=dict)
    """Instant -> one FIFO of timers per phase (made when the phase first has one: most instants of a small run
    have a single timer)."""
    _seq: itertools.count[int] = field(default_factory=itertools.count)
    _cancelled: set[int] = field(default_factory=set)

    def at(self, t: float, phase: int, fn: Callable[..., None], *args: Any) -> int:
        """Run ``fn(*args)`` at virtual time ``t`` (never earlier than now); returns a handle for ``cancel``.

        Arguments rather than a closure: a large run keeps a timer for most of its pods, and a closure per timer is
        three objects more, each read back from memory when it fires (bench/scale.py, 10,000 replicas)."""
        seq = next(self._seq)
        t = max(t, self.clock.now)
        queues = self._due.get(t)
        if queues is None:
            queues = self._due[t] = [None] * _PHASES
            heapq.heappush(self._times, t)
        queue = queues[phase]
        if queue is None:
            queue = queues[phase] = deque()
        queue.append((seq, fn, args))
        return seq

    def cancel(self, handle: int) -> None:
        self._cancelled.add(handle)

    def _next(self, queues: list[deque[_Timer] | None]) -> deque[_Timer] | None:
        """The queue of the instant's next live timer, cancelled timers dropped on the way; None when none is
        left."""
        cancelled = self._cancelled
        for queue in queues:
            while queue:
                if not cancelled or queue[0][0] not in cancelled:
                    return queue
                cancelled.discard(queue.popleft()[0])
        return None

    def next_time(self) -> float | None:
        times = self._times
        while times:
            t = times[0]
            if not self._cancelled or self._next(self._due[t]) is not None:
                return t  # nothing cancelled: an instant on the calendar has a timer (an empty one is dropped)
            heapq.heappop(times)
            del self._due[t]
        return None

    def run_instant(self, after_each: Callable[[], None], *, below_phase: int | None = None) -> None:
        """Advance to the next scheduled instant and run everything due then, including work scheduled meanwhile
        for the same instant; ``after_each`` runs after every item (the driver drains the change feed there).

        With ``below_phase``, only work of lower phases runs (the rest stays queued): ``rollwise plan`` uses it to
        stop an instant just before the controllers act."""
        t = self.next_time()
        if t is None:
            return
        self.clock.now = t
        queues = self._due[t]
        while (queue := self._next(queues)) is not None:
            if below_phase is not None and all(queue is not queues[p] for p in range(below_phase)):
                return
            _, fn, args = queue.popleft()
            fn(*args)
            after_each()
        heapq.heappop(self._times)
        del self._due[t]

    def __bool__(self) -> bool:
        return self.next_time() is not None
