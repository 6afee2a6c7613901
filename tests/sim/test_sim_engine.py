"""The simulator's engine runs work in (time, phase, seq) order, as one heap of every timer would."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from rollwise.sim.engine import CONTROLLER, KUBELET, STEP, Engine

_TIMES = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0])
_PHASE = st.sampled_from([KUBELET, STEP, CONTROLLER])


@dataclass
class _HeapEngine:
    """The plain model: one heap of (t, phase, seq) with cancelled handles skipped."""

    now: float = 0.0
    heap: list[tuple[float, int, int, Callable[..., None], tuple[object, ...]]] = field(default_factory=list)
    seq: int = 0
    cancelled: set[int] = field(default_factory=set)

    def at(self, t: float, phase: int, fn: Callable[..., None], *args: object) -> int:
        self.seq += 1
        heapq.heappush(self.heap, (max(t, self.now), phase, self.seq, fn, args))
        return self.seq

    def cancel(self, handle: int) -> None:
        self.cancelled.add(handle)

    def next_time(self) -> float | None:
        while self.heap and self.heap[0][2] in self.cancelled:
            heapq.heappop(self.heap)
        return self.heap[0][0] if self.heap else None

    def run_instant(self, after_each: Callable[[], None], *, below_phase: int | None = None) -> None:
        t = self.next_time()
        if t is None:
            return
        self.now = t
        while (nt := self.next_time()) is not None and nt <= t:
            if below_phase is not None and self.heap[0][1] >= below_phase:
                return
            _, _, _, fn, args = heapq.heappop(self.heap)
            fn(*args)
            after_each()


# A job: when it runs, it schedules the follow-ups listed for it (delay, phase) and cancels earlier handles.
_JOB = st.tuples(st.lists(st.tuples(st.sampled_from([0.0, 0.0, 1.0, 2.5]), _PHASE), max_size=2),
                 st.lists(st.integers(0, 40), max_size=2))


@pytest.mark.parametrize("n", examples(100, 300))
def test_work_runs_in_time_phase_and_schedule_order_as_one_heap_would(n: int) -> None:
    @settings(max_examples=n, deadline=None)
    @given(initial=st.lists(st.tuples(_TIMES, _PHASE), min_size=1, max_size=12),
           jobs=st.lists(_JOB, min_size=40, max_size=40),
           stop_before=st.sampled_from([None, STEP, CONTROLLER]))
    def check(initial: list[tuple[float, int]], jobs: list[tuple[list[tuple[float, int]], list[int]]],
              stop_before: int | None) -> None:
        def trace(engine: Engine | _HeapEngine, clock: Callable[[], float]) -> list[tuple[float, int]]:
            ran: list[tuple[float, int]] = []
            handles: list[int] = []

            def run(number: int) -> None:
                ran.append((clock(), number))
                if len(handles) >= 200:
                    return
                follow_ups, cancels = jobs[number % len(jobs)]
                for k, (delay, phase) in enumerate(follow_ups):
                    handles.append(engine.at(clock() + delay, phase, run, number * 3 + k + 1))  # work, argument
                for i in cancels:
                    if i < len(handles):
                        engine.cancel(handles[i])

            for number, (t, phase) in enumerate(initial):
                handles.append(engine.at(t, phase, lambda n=number: run(n)))  # a closure
            for _ in range(60):
                if engine.next_time() is None:
                    break
                engine.run_instant(lambda: None, below_phase=stop_before if len(ran) > 20 else None)
            return ran

        ours = Engine()
        model = _HeapEngine()
        assert trace(ours, ours.clock) == trace(model, lambda: model.now)
        assert ours.next_time() == model.next_time()

    check()


def test_a_cancelled_timer_alone_at_its_instant_leaves_the_engine_idle() -> None:
    engine = Engine()
    handle = engine.at(5.0, KUBELET, lambda: None)
    engine.cancel(handle)
    assert engine.next_time() is None
    assert not engine
