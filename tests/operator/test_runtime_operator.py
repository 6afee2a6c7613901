"""The whole operator in virtual time over the memory store: caches, election, reconciles, events, metrics.

What the server-backed tests will check against `rollwise up`, here without a server: a rollout completes through
the operator; with two replicas only the leader writes, and the standby takes over when the leader dies.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from runtime_fakes import run

from rollwise.api.features import FeatureGates
from rollwise.api.identity import revision_of
from rollwise.api.meta import Obj, controller_of, name_of
from rollwise.api.predicates import is_running_and_ready, is_terminating
from rollwise.cluster.resources import ROLLWISE_STATEFULSET
from rollwise.cluster.store.admission import Admission
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.operator.memory import Events, Feed, Leases, MemoryWorld
from rollwise.operator.operator import Operator, OperatorConfig
from rollwise.runtime.clock import VirtualClock

GATES = FeatureGates()
_ADMIT = {ROLLWISE_STATEFULSET: Admission(gates=GATES).hooks()[ROLLWISE_STATEFULSET]}
"""The store's admission of the project's StatefulSets (defaults, then validation), as the API server's."""
WRITTEN_KINDS = {"Pod", "ControllerRevision", "StatefulSet", "PersistentVolumeClaim"}


def _cr(replicas: int = 3) -> Obj:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}}}


class Lab:
    def __init__(self) -> None:
        self.clock = VirtualClock(start=1000.0)
        self.cluster = MemoryCluster(clock=self.clock.now, admit=_ADMIT)
        self.feed = Feed(self.cluster)
        self.user = MemoryWorld(self.feed, actor="user")

    def operator(self, identity: str, seed: int, *, inline: bool = True) -> tuple[Operator, Leases]:
        """``inline``: plans run on the store's sync verbs; otherwise through the API path's ``execute_async``
        and ``LoopCluster`` (with its UID preconditions on pod deletes), as against a server."""
        world = MemoryWorld(self.feed, actor=identity)
        leases = Leases(world)
        config = OperatorConfig(identity=identity, controllers=("statefulset",), leader_elect=True, workers=2)
        op = Operator({"statefulset": world}, config=config, leases=leases, events=Events(world),
                      clock=self.clock, wall_time=self.clock.now, rng=random.Random(seed),
                      inline={"statefulset": world.sync} if inline else None)  # type: ignore[dict-item]
        return op, leases

    async def kubelet(self) -> None:
        """Every second: terminating pods go, new pods become Running and Ready."""
        while True:
            await self.clock.sleep(1.0)
            for pod in self.cluster.list("Pod", "default"):
                if is_terminating(pod):
                    self.cluster.delete("Pod", "default", name_of(pod), grace_period_seconds=0, actor="kubelet")
                elif not is_running_and_ready(pod):
                    self.cluster.update_status({**pod, "status": {"phase": "Running", "conditions": [
                        {"type": "Ready", "status": "True", "lastTransitionTime": self.clock.now()}]}},
                        actor="kubelet")
            await self.feed.notify()

    def pods(self) -> list[Obj]:
        return [p for p in self.cluster.list("Pod", "default") if controller_of(p) is not None]

    def rolled_out(self, replicas: int) -> bool:
        sts = self.cluster.get(ROLLWISE_STATEFULSET, "default", "web")
        update = (sts.get("status") or {}).get("updateRevision")
        pods = self.pods()
        return len(pods) == replicas and all(revision_of(p) == update and is_running_and_ready(p) for p in pods)

    def writers(self) -> set[str]:
        changes, _ = self.cluster.changes_since(0)
        return {c.actor for c in changes if c.kind in WRITTEN_KINDS and c.actor not in ("user", "kubelet")}

    async def until(self, done: Any, *, limit: float = 300.0) -> float:
        deadline = self.clock.now() + limit
        while not done():
            assert self.clock.now() < deadline, "did not happen in virtual time"
            await self.clock.advance(0.5)
        return self.clock.now()


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "api"])
def test_the_operator_creates_and_rolls_a_custom_resource_set(inline: bool) -> None:
    async def go() -> None:
        lab = Lab()
        lab.cluster.create(_cr(3))
        op, _ = lab.operator("op-a", 1, inline=inline)
        stop = asyncio.Event()
        running = asyncio.create_task(op.run(stop))
        kubelet = asyncio.create_task(lab.kubelet())
        await lab.until(lambda: lab.rolled_out(3))
        await lab.user.patch(ROLLWISE_STATEFULSET, "default", "web", {"spec": {"template": {"spec": {
            "containers": [{"name": "app", "image": "app:v2"}]}}}})
        await lab.until(lambda: lab.rolled_out(3) and all(
            p["spec"]["containers"][0]["image"] == "app:v2" for p in lab.pods()))
        assert lab.writers() == {"op-a"}
        reasons = {e["reason"] for e in lab.cluster.list("Event", "default")}
        assert {"SuccessfulCreate", "SuccessfulDelete"} <= reasons
        registry = op.metrics.registry
        assert registry.get_sample_value("leader_election_master_status", {"name": "rollwise"}) == 1
        assert registry.get_sample_value("controller_runtime_reconcile_total",
                                         {"controller": "statefulset", "result": "success"}) > 0
        assert registry.get_sample_value("statefulset_update_duration_seconds_count", {
            "namespace": "default", "statefulset": "web", "strategy": "RollingUpdate"}) == 1
        assert op.not_ready() == [] and op.unhealthy() is None
        # What the holder runs, for `up`'s controllers to stand down by (local/standdown.py).
        held = lab.cluster.get("Lease", "rollwise-system", "rollwise")
        assert held["metadata"]["annotations"] == {"rollwise.dev/controllers": "statefulset",
                                                   "rollwise.dev/namespaces": ""}
        stop.set()
        assert await asyncio.wait_for(running, timeout=30) == "stopped"
        lease = lab.cluster.get("Lease", "rollwise-system", "rollwise")
        assert lease["spec"]["holderIdentity"] == "" and lease["spec"]["leaseDurationSeconds"] == 1
        kubelet.cancel()
    run(go())


def test_only_the_leader_writes_and_the_standby_finishes_after_the_leader_dies() -> None:
    async def go() -> None:
        lab = Lab()
        lab.cluster.create(_cr(4))
        a, _ = lab.operator("op-a", 2)
        b, _ = lab.operator("op-b", 3)
        stop_a, stop_b = asyncio.Event(), asyncio.Event()
        run_a = asyncio.create_task(a.run(stop_a))
        await lab.clock.settle()
        run_b = asyncio.create_task(b.run(stop_b))
        kubelet = asyncio.create_task(lab.kubelet())
        await lab.until(lambda: lab.rolled_out(4))
        assert lab.writers() == {"op-a"} and not b.is_leader()
        assert b.not_ready() == []  # the standby's caches are warm
        await lab.user.patch(ROLLWISE_STATEFULSET, "default", "web", {"spec": {"template": {"spec": {
            "containers": [{"name": "app", "image": "app:v2"}]}}}})
        await lab.clock.advance(2.0)
        run_a.cancel()  # SIGKILL: no release
        died = lab.clock.now()
        await asyncio.gather(run_a, return_exceptions=True)
        took_over = await lab.until(b.is_leader)
        assert took_over - died <= 15.0 + 2.0 * 2.2 + 2.0  # leaseDuration after the last observed renew
        await lab.until(lambda: lab.rolled_out(4) and all(
            p["spec"]["containers"][0]["image"] == "app:v2" for p in lab.pods()))
        assert lab.writers() == {"op-a", "op-b"}
        changes, _ = lab.cluster.changes_since(0)
        a_writes = [c.at for c in changes if c.actor == "op-a" and c.kind in WRITTEN_KINDS]
        assert max(a_writes) <= died  # nothing from the dead leader after it died
        stop_b.set()
        assert await asyncio.wait_for(run_b, timeout=30) == "stopped"
        kubelet.cancel()
    run(go())
