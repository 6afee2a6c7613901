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

import functools
import heapq
import itertools
import operator
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVarTuple, cast

__all__ = ["CONTROLLER", "KUBELET", "STEP", "Engine", "EngineClock", "EngineTimer", "VirtualClock"]

KUBELET = 0
STEP = 1
CONTROLLER = 2
_PHASES = 3


_Ts = TypeVarTuple("_Ts")


@dataclass(slots=True)
class VirtualClock:
    """Virtual seconds since the scenario started. Only the engine moves it."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(slots=True)
class Engine:
    """The simulator's calendar and its clock: ``at(t, phase, fn, *args)`` books work, ``run_instant`` moves
    ``clock`` to the next booked instant and runs what is due then in ``(phase, seq)`` order, ``cancel`` drops a
    booking. Nothing else moves virtual time, so the same bookings run the same way every time (module docstring)."""

    clock: VirtualClock = field(default_factory=VirtualClock)
    _times: list[float] = field(default_factory=list)
    """A heap of the instants ``_due`` holds."""
    _due: dict[float, list[deque[EngineTimer] | None]] = field(default_factory=dict)
    """Instant -> one FIFO of timers per phase (made when the phase first has one: most instants of a small run
    have a single timer)."""
    _seq: itertools.count[int] = field(default_factory=itertools.count)
    _cancelled: set[int] = field(default_factory=set)

    def at(self, t: float, phase: int, fn: Callable[..., None], *args: Any) -> int:
        """Run ``fn(*args)`` at virtual time ``t`` (never earlier than now); returns a handle for ``cancel``."""
        return self.timer(phase, t, fn, *args)[0]

    def timer(self, phase: int, t: float, fn: Callable[..., None], *args: Any) -> EngineTimer:
        """``at`` with the phase first and a timer that cancels itself: ``EngineClock`` binds the phase in a partial,
        so that setting one of the kubelet's timers runs a single Python function.

        Arguments rather than a closure: a large run keeps a timer for most of its pods, and a closure per timer is
        three objects more, each read back from memory when it fires (bench/scale.py, 10,000 replicas)."""
        seq = next(self._seq)
        now = self.clock.now
        t = now if t < now else t  # max(t, now) without a call: every timer of a run passes here
        queues = self._due.get(t)
        if queues is None:
            queues = self._due[t] = [None] * _PHASES
            heapq.heappush(self._times, t)
        queue = queues[phase]
        if queue is None:
            queue = queues[phase] = deque()
        timer = EngineTimer((seq, fn, args, self))
        queue.append(timer)
        return timer

    def cancel(self, handle: int) -> None:
        self._cancelled.add(handle)

    def _next(self, queues: list[deque[EngineTimer] | None]) -> deque[EngineTimer] | None:
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
            _, fn, args, _ = queue.popleft()
            fn(*args)
            after_each()
        heapq.heappop(self._times)
        del self._due[t]

    def __bool__(self) -> bool:
        return self.next_time() is not None


class EngineTimer(tuple[int, Callable[..., None], tuple[Any, ...], Engine]):
    """A timer on the calendar, and its handle: (seq, work, its arguments, the engine). A tuple, so that making
    one runs no Python code: the kubelet sets a timer for most of its looks at a pod (bench/scale.py)."""

    __slots__ = ()

    def cancel(self) -> None:
        self[3].cancel(self[0])


_NOW = operator.attrgetter("now")


class _CallAt(Protocol):
    def __call__(self, when: float, callback: Callable[[*_Ts], None], *args: *_Ts) -> EngineTimer: ...


class EngineClock:
    """The runtime's clock (``runtime/clock.py``) in the simulator: every timer at one ``phase`` of its instant
    (the controllers at CONTROLLER, the kubelet and the application models at KUBELET).

    Both are partials over the engine rather than methods, so a read of the time runs no Python code and setting a
    timer runs only ``Engine.timer``: the kubelet does both at every look at a pod (bench/scale.py)."""

    __slots__ = ("call_at", "now")

    now: Callable[[], float]
    call_at: _CallAt

    def __init__(self, engine: Engine, phase: int) -> None:
        self.now = functools.partial(_NOW, engine.clock)
        # A partial's own type takes any arguments; what it takes is Engine.timer's after the phase.
        self.call_at = cast(_CallAt, functools.partial(engine.timer, phase))
