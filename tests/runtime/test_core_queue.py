"""The controller core's work queue: de-duplication per key, the earliest requeue wins, exponential back-off that
resets on success, and the not-settling guard — on a manual clock, as the simulator and ``up`` drive it."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable

import pytest

from rollwise.runtime.instant_queue import AsyncioScheduler, WorkQueue


class ManualScheduler:
    def __init__(self) -> None:
        self.t = 0.0
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._cancelled: set[int] = set()

    def now(self) -> float:
        return self.t

    def at(self, t: float, fn: Callable[[], None]) -> int:
        handle = next(self._seq)
        heapq.heappush(self._heap, (max(t, self.t), handle, fn))
        return handle

    def cancel(self, handle: int) -> None:
        self._cancelled.add(handle)

    def run_until(self, end: float) -> None:
        while self._heap and self._heap[0][0] <= end:
            t, handle, fn = heapq.heappop(self._heap)
            if handle in self._cancelled:
                continue
            self.t = t
            fn()
        self.t = end


def make(**options: float) -> tuple[ManualScheduler, WorkQueue[str], list[tuple[float, str]]]:
    sched = ManualScheduler()
    seen: list[tuple[float, str]] = []
    queue: WorkQueue[str] = WorkQueue(sched, lambda key: seen.append((sched.t, key)), **options)  # type: ignore[arg-type]
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
    queue.requeue_at("a", 5.0)
    queue.requeue_at("a", 9.0)  # later: ignored
    queue.requeue_at("a", 3.0)  # earlier: replaces
    sched.run_until(20.0)
    assert seen == [(3.0, "a")]


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([True, True, True], [0.005, 0.01, 0.02]),  # doubling from 5 ms
        ([True, True, False, True], [0.005, 0.01, None, 0.005]),  # success resets
    ],
    ids=["doubles", "resets-on-success"],
)
def test_failures_back_off_exponentially(outcomes: list[bool], expected: list[float | None]) -> None:
    sched, queue, seen = make()
    delays: list[float | None] = []
    for failed in outcomes:
        before, processed = sched.t, len(seen)
        queue.done("a", requeue_after=None, failed=failed)
        sched.run_until(sched.t + 100)
        delays.append(round(seen[-1][0] - before, 6) if len(seen) > processed else None)
    assert delays == expected


def test_a_requested_requeue_sooner_than_the_back_off_wins() -> None:
    sched, queue, seen = make(backoff_start=10.0)
    queue.done("a", requeue_after=2.0, failed=True)
    sched.run_until(50.0)
    assert seen == [(2.0, "a")]


def test_a_key_that_never_settles_in_one_instant_raises() -> None:
    sched = ManualScheduler()

    def add_again(key: str) -> None:
        queue.add(key)  # a reconcile whose own writes always mark it dirty again

    queue: WorkQueue[str] = WorkQueue(sched, add_again, max_rounds_per_instant=3)
    queue.add("a")
    with pytest.raises(RuntimeError, match="did not settle"):
        sched.run_until(0.0)


def test_the_asyncio_scheduler_runs_work_on_the_loop_clock() -> None:
    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        seen: list[str] = []

        def process(key: str) -> None:
            seen.append(key)
            done.set()

        queue: WorkQueue[str] = WorkQueue(AsyncioScheduler(loop), process)
        queue.add("a")
        queue.add("a")
        await asyncio.wait_for(done.wait(), timeout=10)
        return seen

    assert asyncio.run(main()) == ["a"]


def test_the_asyncio_scheduler_speaks_the_clock_it_is_given() -> None:
    async def main() -> tuple[float, list[float]]:
        loop = asyncio.get_running_loop()
        fired = asyncio.Event()
        virtual = [1_000.0]
        sched = AsyncioScheduler(loop, clock=lambda: virtual[0])
        seen: list[float] = []

        def fire() -> None:
            seen.append(sched.now())
            fired.set()

        sched.at(999.0, fire)  # already due on that clock: runs at once
        await asyncio.wait_for(fired.wait(), timeout=10)
        return sched.now(), seen

    assert asyncio.run(main()) == (1_000.0, [1_000.0])
