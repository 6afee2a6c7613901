"""What the elector says and how it waits when refused: a standby names the holder it waits for (once per holder),
and Forbidden answers back off exponentially, naming the permission missing, instead of every retryPeriod."""

from __future__ import annotations

import asyncio
import logging
import random
from itertools import pairwise

import pytest
from runtime_fakes import MemoryLeases, run

from rollwise.api.errors import CredentialsUnavailable, Forbidden
from rollwise.api.meta import Obj
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.operator.election import DENIED_BACKOFF_CAP_SECONDS, JITTER_FACTOR, LeaderElector
from rollwise.runtime.clock import VirtualClock

EPOCH = 1_700_000_000.0


class RefusingLeases(MemoryLeases):
    async def get(self, namespace: str, name: str) -> Obj:
        raise Forbidden(f'leases.coordination.k8s.io "{name}" is forbidden: User "system:serviceaccount:ops:rw" '
                        f'cannot get resource "leases" in API group "coordination.k8s.io" in the namespace '
                        f'"{namespace}"')


def _elector(client: MemoryLeases, clock: VirtualClock, identity: str) -> LeaderElector:
    return LeaderElector(client, namespace="rollwise-system", name="rollwise", identity=identity, clock=clock,
                         rng=random.Random(1), wall_time=lambda: EPOCH + clock.now())


def test_a_standby_logs_the_holder_it_waits_for_once(caplog: pytest.LogCaptureFixture) -> None:
    async def go() -> None:
        clock = VirtualClock()
        cluster = MemoryCluster(clock=clock.now)
        leader = asyncio.create_task(_elector(MemoryLeases(cluster), clock, "op-a").run())
        await clock.settle()
        standby = asyncio.create_task(_elector(MemoryLeases(cluster), clock, "op-b").run())
        await clock.run_until(30.0)
        for task in (leader, standby):
            task.cancel()
        await asyncio.gather(leader, standby, return_exceptions=True)

    with caplog.at_level(logging.INFO, logger="rollwise.runtime.election"):
        run(go())
    waits = [r for r in caplog.records if "waiting for lease" in r.getMessage()]
    assert [r.getMessage() for r in waits] == ["op-b waiting for lease rollwise-system/rollwise, held by op-a"]
    assert getattr(waits[0], "holder", None) == "op-a"


def test_forbidden_backs_off_exponentially_and_names_the_missing_permission(caplog: pytest.LogCaptureFixture) -> None:
    elector: LeaderElector

    async def go() -> None:
        nonlocal elector
        clock = VirtualClock()
        elector = _elector(RefusingLeases(MemoryCluster(clock=clock.now)), clock, "op-a")
        task = asyncio.create_task(elector.run())
        await clock.run_until(400.0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    with caplog.at_level(logging.WARNING, logger="rollwise.runtime.election"):
        run(go())
    times = [t for t, _, _ in elector.attempts]
    gaps = [b - a for a, b in pairwise(times)]
    retry = elector.timings.retry_period_seconds
    for n, gap in enumerate(gaps[:4], start=1):  # 2ⁿ retry periods, jittered as client-go jitters
        assert retry * 2 ** n <= gap <= retry * 2 ** n * (1 + JITTER_FACTOR)
    assert max(gaps) <= DENIED_BACKOFF_CAP_SECONDS * (1 + JITTER_FACTOR)
    assert len(times) < 15, "not every retryPeriod (2 s) for 400 s"
    refused = caplog.records[0].getMessage()
    assert "missing permission: get on leases.coordination.k8s.io in namespace rollwise-system" in refused
    assert 'cannot get resource "leases"' in refused


class UnauthenticatedLeases(MemoryLeases):
    async def get(self, namespace: str, name: str) -> Obj:
        raise CredentialsUnavailable("getting credentials: Exec aws returned 255: token expired")


def test_no_credentials_back_off_too_and_name_the_credentials_not_a_permission(
        caplog: pytest.LogCaptureFixture) -> None:
    async def go() -> None:
        clock = VirtualClock()
        task = asyncio.create_task(_elector(UnauthenticatedLeases(MemoryCluster(clock=clock.now)), clock, "op-a").run())
        await clock.run_until(60.0)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    with caplog.at_level(logging.WARNING, logger="rollwise.runtime.election"):
        run(go())
    refused = caplog.records[0].getMessage()
    assert "token expired" in refused and "missing credentials: the kubeconfig's user" in refused
    assert "permission" not in refused
    assert len(caplog.records) < 10, "backed off, not every retryPeriod"
