"""The operator runtime in one process, over the memory store, in virtual time: what a rollout costs the runtime.

N sets of R replicas (RollingUpdate, maxUnavailable 2) are created, become ready, and roll to a new image, driven
by the whole operator (informers, work queue, consistency check, leader election, event recorder) with a kubelet
that starts a pod in 1 s and ends one at once. Prints wall time per phase, reconciles per wall second, peak RSS,
and the API writes per replaced pod against upstream's (one delete, one create, plus status writes).

Run: `.venv/bin/python bench/runtime.py [--sets N] [--replicas R]` (defaults 100 x 10 = 1,000 pods).
The figures against a real API server come from bench/operator_on_up.py once `rollwise up` exists.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import time
from collections import Counter
from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.api.identity import revision_of
from rollwise.api.meta import Obj, name_of, namespace_of
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


def _set(name: str, replicas: int) -> Obj:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}}}


async def _kubelet(clock: VirtualClock, cluster: MemoryCluster, feed: Feed) -> None:
    while True:
        await clock.sleep(1.0)
        for pod in cluster.list("Pod"):
            if is_terminating(pod):
                cluster.delete("Pod", namespace_of(pod), name_of(pod), grace_period_seconds=0, actor="kubelet")
            elif not is_running_and_ready(pod):
                cluster.update_status({**pod, "status": {"phase": "Running", "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": clock.now()}]}}, actor="kubelet")
        await feed.notify()


def _done(cluster: MemoryCluster, replicas: int, image: str) -> bool:
    for sts in cluster.list(ROLLWISE_STATEFULSET):
        update = (sts.get("status") or {}).get("updateRevision")
        pods = cluster.list("Pod", "default", selector=sts["spec"]["selector"])
        if len(pods) != replicas or not all(
                revision_of(p) == update and is_running_and_ready(p) and p["spec"]["containers"][0]["image"] == image
                for p in pods):
            return False
    return True


async def bench(sets: int, replicas: int) -> dict[str, Any]:
    clock = VirtualClock(start=1000.0)
    cluster = MemoryCluster(clock=clock.now, admit=_ADMIT)
    feed = Feed(cluster)
    world = MemoryWorld(feed, actor="op-a")
    op = Operator({"statefulset": world}, config=OperatorConfig(identity="op-a", controllers=("statefulset",),
                                                               leader_elect=True, workers=5),
                  leases=Leases(world), events=Events(world), clock=clock, wall_time=clock.now,
                  rng=random.Random(1), inline={"statefulset": world.sync})  # type: ignore[dict-item]
    for i in range(sets):
        cluster.create(_set(f"s{i:04d}", replicas))
    stop = asyncio.Event()
    running = asyncio.create_task(op.run(stop))
    kubelet = asyncio.create_task(_kubelet(clock, cluster, feed))
    phases: dict[str, float] = {}

    async def until(done: Any, limit: float) -> float:
        start_virtual, start = clock.now(), time.perf_counter()
        while not done():
            if clock.now() - start_virtual > limit:
                raise SystemExit("the rollout did not finish in virtual time")
            await clock.advance(1.0)
        return time.perf_counter() - start

    phases["create"] = await until(lambda: _done(cluster, replicas, "app:v1"), 3600)
    reconciles_before = _reconciles(op)
    cursor = cluster.cursor
    for sts in cluster.list(ROLLWISE_STATEFULSET):
        cluster.patch(ROLLWISE_STATEFULSET, "default", name_of(sts), {"spec": {"template": {"spec": {
            "containers": [{"name": "app", "image": "app:v2"}]}}}})
    await feed.notify()
    phases["rollout"] = await until(lambda: _done(cluster, replicas, "app:v2"), 3600)
    changes, _ = cluster.changes_since(cursor)
    writes = Counter(f"{c.kind} {c.type}" for c in changes if c.actor == "op-a")
    rollout_reconciles = _reconciles(op) - reconciles_before
    stop.set()
    await running
    kubelet.cancel()
    pods = sets * replicas
    return {"phases": phases, "writes": writes, "pods": pods, "reconciles": rollout_reconciles,
            "stale_skips": op.metrics.registry.get_sample_value("rollwise_stale_sync_skips_total",
                                                                {"controller": "statefulset"}) or 0.0}


def _reconciles(op: Operator) -> float:
    total = 0.0
    for metric in op.metrics.registry.collect():
        if metric.name == "controller_runtime_reconcile":
            total += sum(s.value for s in metric.samples if s.name.endswith("_total"))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=100)
    parser.add_argument("--replicas", type=int, default=10)
    args = parser.parse_args()
    out = asyncio.run(bench(args.sets, args.replicas))
    pods = out["pods"]
    print(f"operator runtime over the memory store: {args.sets} sets x {args.replicas} replicas = {pods} pods")
    print(f"  create and become ready: {out['phases']['create']:.2f} s wall")
    print(f"  roll every pod to a new image: {out['phases']['rollout']:.2f} s wall, {out['reconciles']:.0f} "
          f"reconciles ({out['reconciles'] / out['phases']['rollout']:.0f}/s), "
          f"{out['stale_skips']:.0f} stale-cache skips")
    print(f"  peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print("  API writes per replaced pod during the rollout (upstream: 1 delete, 1 create, plus status writes;")
    print("  a graceful pod DELETE is recorded as Pod MODIFIED, the kubelet's final removal is not counted):")
    for key, n in sorted(out["writes"].items()):
        print(f"    {key:32s} {n / pods:6.2f}")
    print(f"  command: .venv/bin/python bench/runtime.py --sets {args.sets} --replicas {args.replicas}")


if __name__ == "__main__":
    main()
