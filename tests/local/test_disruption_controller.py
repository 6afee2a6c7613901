"""`rollwise up`'s disruption controller on its own, in process over the memory store, on the runtime's controller
host: a budget's status follows its pods, many changes before a loop turn cost one recompute, and the controller's
own status write does not wake it again (local/hosted.py, runtime/registrations.py's ``DISRUPTION`` row). End to end
with kubectl: tests/apiserver/test_disruption_budgets_on_up.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rollwise.cluster.resources import POD
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.cluster.store.pump import FeedPump
from rollwise.local.hosted import LocalControllers
from rollwise.runtime.clock import EpochClock
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.registrations import DISRUPTION
from rollwise.runtime.wakes import PDB

NOW = 1_000.0
ACTOR = DISRUPTION.actor


def _pod(name: str, *, ready: bool) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "db"}},
            "spec": {"containers": [{"name": "c", "image": "etcd:3.5"}]},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


BUDGET = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
          "metadata": {"name": "db", "namespace": "default"},
          "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "db"}}}}


class World:
    """The store, its feed, and the controller, whose reconciles are counted: it pumps the feed after each one.
    Made on the running loop (the host's timers are the loop's)."""

    def __init__(self) -> None:
        self.cluster = MemoryCluster(clock=lambda: NOW)
        self.feed = FeedPump(self.cluster)
        self.turns = 0
        self.controller = LocalControllers(self.cluster, rows=(DISRUPTION,), pump=self._pumped,
                                           clock=EpochClock(asyncio.get_running_loop(), lambda: NOW))
        self.changes = ChangeDispatcher()
        self.feed.listen(self.changes.dispatch)
        for i in range(3):
            self.cluster.create(_pod(f"db-{i}", ready=True))
        self.cluster.create(BUDGET)
        self.feed.pump()  # as the HTTP handlers do after each write; the host, not started, runs nothing yet
        self.turns = 0

    def _pumped(self) -> None:
        self.turns += 1
        self.feed.pump()


async def _turns(n: int = 5) -> None:
    """Let the event loop run a few turns: a controller turn is scheduled with ``call_soon``."""
    for _ in range(n):
        await asyncio.sleep(0)


def _status(cluster: MemoryCluster) -> dict[str, Any]:
    return cluster.get(PDB, "default", "db").get("status") or {}


def test_a_budgets_status_follows_its_pods_and_the_controllers_own_write_does_not_wake_it() -> None:
    async def run() -> None:
        world = World()
        world.controller.start(world.changes)
        await _turns()
        status = _status(world.cluster)
        assert (status["currentHealthy"], status["desiredHealthy"], status["disruptionsAllowed"]) == (3, 2, 1)
        assert world.cluster.write_count(ACTOR) == 1
        assert world.turns == 1  # its status write went through the feed after the turn, and marked nothing
        await _turns()
        assert (world.turns, world.cluster.write_count(ACTOR)) == (1, 1)
        world.controller.stop()

    asyncio.run(run())


def test_many_pod_changes_before_the_host_runs_are_one_recompute_and_one_write() -> None:
    async def run() -> None:
        world = World()
        world.controller.start(world.changes)
        await _turns()
        turns, writes = world.turns, world.cluster.write_count(ACTOR)
        for i in range(3):  # every pod turns unready, each change pumped at once as an HTTP handler does
            pod = world.cluster.get(POD, "default", f"db-{i}")
            world.cluster.update_status({**pod, "status": _pod(f"db-{i}", ready=False)["status"]})
            world.feed.pump()
        await _turns()
        status = _status(world.cluster)
        assert (status["currentHealthy"], status["disruptionsAllowed"]) == (0, 0)
        assert status["conditions"][0]["reason"] == "InsufficientPods"
        assert (world.turns, world.cluster.write_count(ACTOR)) == (turns + 1, writes + 1)
        world.controller.stop()

    asyncio.run(run())
