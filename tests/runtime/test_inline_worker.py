"""The one work queue as the simulator and ``up`` drive it (an inline worker on the clock's timers):
de-duplication per key, the earliest requeue wins, exponential back-off that resets on success, and the
not-settling guard — on a manual clock."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Iterator

import pytest

from rollwise.runtime.clock import EpochClock
from rollwise.runtime.inline import InlineWorker, finish
from rollwise.runtime.limiter import ItemExponentialRateLimiter
from rollwise.runtime.queue import WorkQueue


class _Handle:
    def __init__(self, cancelled: set[int], seq: int) -> None:
        self._cancelled, self._seq = cancelled, seq

    def cancel(self) -> None:
        self._cancelled.add(self._seq)


class ManualScheduler:
    def __init__(self) -> None:
        self.t = 0.0
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._cancelled: set[int] = set()

    def now(self) -> float:
        return self.t

    def call_at(self, t: float, fn: Callable[[], None]) -> _Handle:
        handle = next(self._seq)
        heapq.heappush(self._heap, (max(t, self.t), handle, fn))
        return _Handle(self._cancelled, handle)

    def run_until(self, end: float) -> None:
        while self._heap and self._heap[0][0] <= end:
            t, handle, fn = heapq.heappop(self._heap)
            if handle in self._cancelled:
                continue
            self.t = t
            fn()
        self.t = end


def make(*, backoff_start: float = 0.005) -> tuple[ManualScheduler, WorkQueue[str], list[tuple[float, str]]]:
    sched = ManualScheduler()
    seen: list[tuple[float, str]] = []
    queue: WorkQueue[str] = WorkQueue(sched, limiter=ItemExponentialRateLimiter(backoff_start, 1000.0))

    def process(key: str) -> tuple[float | None, bool]:
        seen.append((sched.t, key))
        return None, False

    InlineWorker(queue, process)
    return sched, queue, seen


def test_a_key_added_many_times_before_it_runs_is_processed_once() -> None:
    sched, queue, seen = make()
    for key in ["a", "b", "a", "a"]:
        queue.add(key)
    assert "a" in queue
    sched.run_until(0.0)
    assert seen == [(0.0, "a"), (0.0, "b")]
    assert "a" not in queue


def test_the_earliest_pending_requeue_wins_and_a_later_one_is_ignored() -> None:
    sched, queue, seen = make()
    queue.add_at("a", 5.0)
    queue.add_at("a", 9.0)  # later: ignored
    queue.add_at("a", 3.0)  # earlier: replaces
    sched.run_until(20.0)
    assert seen == [(3.0, "a")]


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        ([[True, True, True]], [[0.005, 0.01, 0.02]]),  # doubling from 5 ms
        ([[True, True, False], [True]], [[0.005, 0.01], [0.005]]),  # success resets
    ],
    ids=["doubles", "resets-on-success"],
)
def test_failures_back_off_exponentially(phases: list[list[bool]], expected: list[list[float]]) -> None:
    """Each reconcile fails or succeeds as the phase's script says (then succeeds); a phase starts with an add.
    The gaps between a phase's runs are the back-offs."""
    sched = ManualScheduler()
    queue: WorkQueue[str] = WorkQueue(sched, limiter=ItemExponentialRateLimiter(0.005, 1000.0))
    runs: list[float] = []
    script: Iterator[bool] = iter(())

    def process(key: str) -> tuple[float | None, bool]:
        runs.append(sched.t)
        return None, next(script, False)

    InlineWorker(queue, process)
    gaps: list[list[float]] = []
    for outcomes in phases:
        script, runs = iter(outcomes), []
        queue.add("a")
        sched.run_until(sched.t + 100)
        gaps.append([round(b - a, 6) for a, b in itertools.pairwise(runs)])
    assert gaps == expected


def test_a_requested_requeue_sooner_than_the_back_off_wins() -> None:
    sched, queue, seen = make(backoff_start=10.0)
    finish(queue, "a", requeue_after=2.0, failed=True)
    sched.run_until(50.0)
    assert seen == [(2.0, "a")]


def test_a_key_that_never_settles_in_one_instant_raises() -> None:
    sched = ManualScheduler()

    def add_again(key: str) -> tuple[float | None, bool]:
        queue.add(key)  # a reconcile whose own writes always mark it dirty again
        return None, False

    queue: WorkQueue[str] = WorkQueue(sched)
    InlineWorker(queue, add_again, max_rounds_per_instant=3)
    queue.add("a")
    with pytest.raises(RuntimeError, match="did not settle"):
        sched.run_until(0.0)


def test_the_epoch_clock_runs_work_on_the_loop() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        seen: list[str] = []

        def process(key: str) -> tuple[float | None, bool]:
            seen.append(key)
            done.set()
            return None, False

        queue: WorkQueue[str] = WorkQueue(EpochClock(loop))
        InlineWorker(queue, process)
        queue.add("a")
        queue.add("a")
        await asyncio.wait_for(done.wait(), timeout=10)
        return seen

    assert asyncio.run(main()) == ["a"]


def test_the_epoch_clock_speaks_the_time_it_is_given() -> None:
    async def main() -> tuple[float, list[float]]:
        loop = asyncio.get_running_loop()
        fired = asyncio.Event()
        virtual = [1_000.0]
        sched = EpochClock(loop, lambda: virtual[0])
        seen: list[float] = []

        def fire() -> None:
            seen.append(sched.now())
            fired.set()

        sched.call_at(999.0, fire)  # already due on that clock: runs at once
        await asyncio.wait_for(fired.wait(), timeout=10)
        return sched.now(), seen

    assert asyncio.run(main()) == (1_000.0, [1_000.0])
