"""The one controller host (runtime/host.py) as `up` runs its controllers of objects other than sets
(local/hosted.py) and as an awaited reconcile runs on it: a refused write backs the key off per key, the delay
doubling, and a success forgets it; on a virtual clock, driven through the store's change feed."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import Any

import pytest

from rollwise.api.errors import Conflict
from rollwise.api.meta import Obj
from rollwise.cluster.resources import POD
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.cluster.store.pump import FeedPump
from rollwise.local.hosted import LocalControllers
from rollwise.runtime.clock import VirtualClock
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.host import ControllerHost
from rollwise.runtime.registrations import REPLICASET_ROW

RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
      "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
               "template": {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


class _RefusingPods(MemoryCluster):
    """A store that refuses the first ``refusals`` pod creates with a Conflict, noting when each create came."""

    def __init__(self, clock: VirtualClock, refusals: int) -> None:
        super().__init__(clock=clock.now)
        self.virtual = clock
        self.refusals = refusals
        self.attempts: list[float] = []

    def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        if obj.get("kind") == "Pod":
            self.attempts.append(self.virtual.now())
            if len(self.attempts) <= self.refusals:
                raise Conflict("refused")
        return super().create(obj, actor=actor, handed_over=handed_over)


def test_a_refused_replicaset_write_in_up_backs_off_per_key_and_the_delay_doubles() -> None:
    async def run() -> None:
        clock = VirtualClock(100.0)
        cluster = _RefusingPods(clock, refusals=3)
        feed = FeedPump(cluster)
        hosted = LocalControllers(cluster, rows=(REPLICASET_ROW,), clock=clock, pump=feed.pump)
        changes = ChangeDispatcher()
        feed.listen(changes.dispatch)
        cluster.create(RS)
        feed.pump()  # as the HTTP handler does; the host wakes every set when it starts
        hosted.start(changes)
        await clock.run_until(110.0)
        assert len(cluster.list(POD, "default")) == 1
        gaps = [round(b - a, 6) for a, b in zip(cluster.attempts, cluster.attempts[1:], strict=False)]
        assert gaps == [0.005, 0.01, 0.02]  # the runtime's per-key back-off, not a fixed retry
        queue = hosted.hosted[0][1].queue
        assert queue.num_requeues((REPLICASET_ROW.kinds[0], "default", "web")) == 0  # the success forgot them
        hosted.stop()

    asyncio.run(run())


def test_an_awaited_reconcile_that_raises_backs_off_and_one_that_returns_is_forgotten() -> None:
    async def run() -> None:
        clock = VirtualClock(0.0)
        calls: list[float] = []

        async def reconcile(key: Hashable) -> float | None:
            calls.append(clock.now())
            if len(calls) <= 2:
                raise Conflict("stale read")
            return None

        host: ControllerHost[Any] = ControllerHost("test", clock=clock, awaited=reconcile)
        host.start()
        host.wake("k")
        await clock.run_until(5.0)
        assert [round(c, 6) for c in calls] == [0.0, 0.005, 0.015]
        assert host.queue.num_requeues("k") == 0
        host.stop()

    asyncio.run(run())


def test_a_host_takes_exactly_one_kind_of_reconcile() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ControllerHost("test", clock=VirtualClock())
