"""Lease leader election in virtual time: client-go's validation, timings, takeover, renew deadline, release."""

from __future__ import annotations

import asyncio
import random

import pytest
from runtime_fakes import MemoryLeases, run

from rollwise.api.errors import Conflict
from rollwise.api.meta import Obj
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.operator.election import JITTER_FACTOR, LeaderElector, LeaseTimings
from rollwise.runtime.clock import VirtualClock

EPOCH = 1_800_000_000.0


@pytest.mark.parametrize(("lease", "renew", "retry", "rule"), [
    (10, 10, 2, "leaseDuration .* must be greater than renewDeadline"),
    (15, 2.4, 2, r"renewDeadline .* must be greater than 1.2 x retryPeriod"),
    (15, 10, 0, "greater than zero"),
])
def test_timings_are_validated_as_client_go_does(lease: float, renew: float, retry: float, rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        LeaseTimings(lease_duration_seconds=lease, renew_deadline_seconds=renew, retry_period_seconds=retry)


def test_default_timings_are_15_10_2() -> None:
    t = LeaseTimings()
    assert (t.lease_duration_seconds, t.renew_deadline_seconds, t.retry_period_seconds) == (15, 10, 2)


class World:
    def __init__(self) -> None:
        self.clock = VirtualClock()
        self.cluster = MemoryCluster(clock=self.clock.now)
        self.clients: dict[str, MemoryLeases] = {}

    def elector(self, identity: str, seed: int) -> LeaderElector:
        client = self.clients[identity] = MemoryLeases(self.cluster)
        return LeaderElector(client, namespace="rollwise-system", name="rollwise", identity=identity,
                             clock=self.clock, rng=random.Random(seed), wall_time=lambda: EPOCH + self.clock.now())

    def lease(self) -> Obj:
        return self.cluster.get("Lease", "rollwise-system", "rollwise")


def _first_success(elector: LeaderElector) -> int:
    return next(i for i, (_, ok, _) in enumerate(elector.attempts) if ok)


def test_a_follower_acquires_at_its_first_retry_after_observed_plus_lease_duration() -> None:
    async def go() -> None:
        w = World()
        a, b = w.elector("op-a", 1), w.elector("op-b", 2)
        ta = asyncio.create_task(a.run())
        await w.clock.settle()
        assert a.is_leader() and w.lease()["spec"]["leaseTransitions"] == 0
        tb = asyncio.create_task(b.run())
        await w.clock.run_until(30.0)
        assert not b.is_leader() and a.is_leader()
        ta.cancel()  # the leader dies without releasing (SIGKILL)
        await w.clock.run_until(80.0)
        assert b.is_leader() and w.lease()["spec"]["holderIdentity"] == "op-b"
        i = _first_success(b)
        took_at = b.attempts[i][0]
        before, _, observed = b.attempts[i - 1]
        assert before < observed + 15.0 <= took_at
        retries = [t2 - t1 for (t1, _, _), (t2, _, _) in zip(b.attempts, b.attempts[1:], strict=False)]
        assert all(2.0 <= gap <= 2.0 * (1 + JITTER_FACTOR) for gap in retries[:i])
        last_renew = max(t for t, ok, _ in a.attempts if ok)
        assert last_renew <= observed < last_renew + 2.0 * (1 + JITTER_FACTOR)  # seen at b's next retry
        assert w.lease()["spec"]["leaseTransitions"] == 1
        tb.cancel()
    run(go())


def test_the_leader_stops_when_no_renew_succeeds_within_the_renew_deadline() -> None:
    async def go() -> None:
        w = World()
        a = w.elector("op-a", 3)
        changes: list[tuple[float, bool]] = []
        a.on_change = lambda leading: changes.append((w.clock.now(), leading))
        ta = asyncio.create_task(a.run())
        await w.clock.run_until(7.0)
        last_renew = max(t for t, ok, _ in a.attempts if ok)
        w.clients["op-a"].partitioned = True
        await w.clock.run_until(last_renew + 9.999)
        assert a.is_leader()
        await w.clock.run_until(last_renew + 10.0)
        assert not a.is_leader()  # the fence closes on the monotonic clock, whatever the loop is doing
        await w.clock.run_until(last_renew + 12.0)
        assert ta.done() and changes[-1][1] is False
        assert changes[-1][0] <= last_renew + 10.0
    run(go())


def test_a_paused_leader_is_fenced_before_its_loop_runs_again() -> None:
    async def go() -> None:
        w = World()
        a = w.elector("op-a", 4)
        task = asyncio.create_task(a.run())
        await w.clock.settle()
        assert a.is_leader()
        w.clock.jump(10.0)  # the process was stopped for renewDeadline: no timer of it has fired
        assert not a.is_leader()
        task.cancel()
    run(go())


def test_release_lets_the_follower_acquire_at_its_next_retry() -> None:
    async def go() -> None:
        w = World()
        a, b = w.elector("op-a", 5), w.elector("op-b", 6)
        ta = asyncio.create_task(a.run())
        await w.clock.settle()
        tb = asyncio.create_task(b.run())
        await w.clock.run_until(20.0)
        ta.cancel()
        await w.clock.settle()
        assert await a.release()
        released_at = w.clock.now()
        spec = w.lease()["spec"]
        assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
        await w.clock.run_until(released_at + 2.0 * (1 + JITTER_FACTOR))
        assert b.is_leader()
        took_at = b.attempts[_first_success(b)][0]
        assert released_at < took_at <= released_at + 2.0 * (1 + JITTER_FACTOR)
        assert w.lease()["spec"]["leaseTransitions"] == 1
        assert not await a.release()  # not the holder any more: nothing to give up
        tb.cancel()
    run(go())


def test_release_after_a_renew_whose_reply_was_lost_still_gives_the_lease_up() -> None:
    async def go() -> None:
        w = World()
        a = w.elector("op-a", 5)
        assert await a.try_acquire_or_renew()
        w.clock.jump(1.0)

        class ReplyLost(MemoryLeases):
            async def update(self, lease: Obj) -> Obj:
                await super().update(lease)  # the renew lands; shutdown cancels the wait for its reply
                raise asyncio.CancelledError

        a.client = ReplyLost(w.cluster)
        with pytest.raises(asyncio.CancelledError):
            await a.try_acquire_or_renew()
        a.client = w.clients["op-a"]
        assert await a.release()  # a 409 on the observed version; read again, still ours, released
        spec = w.lease()["spec"]
        assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    run(go())


def test_release_after_a_lost_reply_leaves_a_lease_someone_else_now_holds() -> None:
    async def go() -> None:
        w = World()
        a = w.elector("op-a", 5)
        assert await a.try_acquire_or_renew()
        lease = w.lease()
        w.cluster.update({**lease, "spec": {**lease["spec"], "holderIdentity": "op-b"}})
        assert not await a.release()
        assert w.lease()["spec"]["holderIdentity"] == "op-b"
    run(go())


def test_a_conflict_on_update_means_this_round_is_lost() -> None:
    async def go() -> None:
        w = World()
        a, b = w.elector("op-a", 7), w.elector("op-b", 8)
        assert await a.try_acquire_or_renew()
        stale = w.lease()

        class StaleRead(MemoryLeases):
            async def get(self, namespace: str, name: str) -> Obj:
                return stale

        b.client = StaleRead(w.cluster)
        w.clock.jump(100.0)  # long expired by b's clock, but a renews first
        assert await a.try_acquire_or_renew()
        with pytest.raises(Conflict):
            w.cluster.update(stale)
        assert not await b.try_acquire_or_renew()
        assert w.lease()["spec"]["holderIdentity"] == "op-a"
    run(go())


def test_a_record_change_restarts_the_expiry_clock() -> None:
    async def go() -> None:
        w = World()
        a, b = w.elector("op-a", 9), w.elector("op-b", 10)
        assert await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()  # observed at t=0
        w.clock.jump(14.0)
        assert await a.try_acquire_or_renew()  # renewed at 14
        w.clock.jump(16.0)
        assert not await b.try_acquire_or_renew()  # the change is observed now: expiry moves to 31
        w.clock.jump(30.9)
        assert not await b.try_acquire_or_renew()
        w.clock.jump(31.0)
        assert await b.try_acquire_or_renew()
    run(go())
