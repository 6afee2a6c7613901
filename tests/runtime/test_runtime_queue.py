"""The work queue and its limiters, in virtual time (client-go util/workqueue semantics and figures)."""

from __future__ import annotations

import asyncio

import pytest
from runtime_fakes import run

from rollwise.runtime.clock import VirtualClock
from rollwise.runtime.limiter import (
    BucketRateLimiter,
    ItemExponentialRateLimiter,
    default_controller_rate_limiter,
)
from rollwise.runtime.queue import QueueShutDown, WorkQueue


@pytest.mark.parametrize(("failures", "expected"), [(0, 0.005), (1, 0.01), (2, 0.02), (10, 5.12), (17, 655.36),
                                                    (18, 1000.0), (100, 1000.0)])
def test_item_backoff_is_5ms_doubling_capped_at_1000s(failures: int, expected: float) -> None:
    limiter = ItemExponentialRateLimiter()
    for _ in range(failures):
        limiter.when("k")
    assert limiter.when("k") == pytest.approx(expected)
    assert limiter.num_requeues("k") == failures + 1


def test_forget_restarts_the_backoff_of_that_key_only() -> None:
    limiter = ItemExponentialRateLimiter()
    for _ in range(5):
        limiter.when("a")
        limiter.when("b")
    limiter.forget("a")
    assert limiter.when("a") == pytest.approx(0.005)
    assert limiter.when("b") == pytest.approx(0.16)


def test_bucket_allows_a_burst_of_100_then_10_per_second() -> None:
    now = [0.0]
    bucket = BucketRateLimiter(qps=10, burst=100, clock=lambda: now[0])
    assert [bucket.when(i) for i in range(100)] == [0.0] * 100
    assert bucket.when(100) == pytest.approx(0.1)
    assert bucket.when(101) == pytest.approx(0.2)
    now[0] = 10.0  # ten seconds refill 100 tokens, less the two borrowed
    assert bucket.when(102) == pytest.approx(0.0)


def test_default_limiter_takes_the_larger_wait() -> None:
    clock = VirtualClock()
    limiter = default_controller_rate_limiter(clock.now)
    waits = [limiter.when(f"key-{i}") for i in range(105)]
    assert waits[0] == pytest.approx(0.005)  # per-item back-off dominates while the bucket is full
    assert waits[104] == pytest.approx(0.5)  # five tokens in debt at 10 qps
    limiter.forget("key-0")
    assert limiter.num_requeues("key-0") == 0


def test_a_key_is_held_once_while_waiting() -> None:
    async def go() -> None:
        q = WorkQueue(VirtualClock())
        for key in ("a", "b", "a", "a"):
            q.add(key)
        assert len(q) == 2
        assert [await q.get(), await q.get()] == ["a", "b"]
    run(go())


def test_a_key_is_never_handed_out_twice_and_a_readd_during_processing_runs_after() -> None:
    async def go() -> None:
        q = WorkQueue(VirtualClock())
        q.add("a")
        assert await q.get() == "a"
        q.add("a")  # an event arrives while "a" is being reconciled
        assert len(q) == 0 and q.is_processing("a")
        second = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        assert not second.done()
        q.done("a")
        assert await second == "a"
        q.done("a")
        assert len(q) == 0
    run(go())


def test_add_after_fires_at_the_earliest_time_asked_for() -> None:
    async def go() -> None:
        clock = VirtualClock()
        q = WorkQueue(clock)
        q.add_after("a", 5.0)
        q.add_after("a", 3.0)
        q.add_after("a", 9.0)
        q.add_after("b", 4.0)
        await clock.run_until(2.9)
        assert len(q) == 0
        await clock.run_until(3.0)
        assert len(q) == 1 and await q.get() == "a"
        await clock.run_until(4.0)
        assert await q.get() == "b"
        await clock.run_until(100.0)
        assert len(q) == 0  # the superseded 5 s and 9 s entries never add "a" again
    run(go())


def test_add_rate_limited_waits_as_the_limiter_says() -> None:
    async def go() -> None:
        clock = VirtualClock()
        q = WorkQueue(clock)
        for _ in range(3):
            q.add_rate_limited("a")  # 5 ms, 10 ms, 20 ms: the earliest wins
        assert q.waiting() == {"a": pytest.approx(0.005)}
        assert q.num_requeues("a") == 3
        q.forget("a")
        assert q.num_requeues("a") == 0
    run(go())


def test_shutdown_drains_then_stops_getters() -> None:
    async def go() -> None:
        q = WorkQueue(VirtualClock())
        q.add("a")
        waiter = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        assert await waiter == "a"
        blocked = asyncio.create_task(q.get())
        await asyncio.sleep(0)
        q.shutdown()
        with pytest.raises(QueueShutDown):
            await blocked
        q.add("b")
        assert len(q) == 0
    run(go())
