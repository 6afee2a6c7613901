"""The world layer's own costs: writes in memory and through SQLite, reopening a data directory, watch fan-out.

- 10,000 pod creates and 10,000 status writes, in memory and with SQLite persistence (writes/s);
- reopening a data directory of those 10,000 pods (seconds);
- 100 watches with label selectors (each matching a tenth of the pods) over 10,000 writes (events delivered/s).

Run: `.venv/bin/python bench/store.py [--pods N]`. Each figure is the best of 3 runs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable

from rollwise.cluster.store.memory import MemoryCluster


def _pod(i: int) -> dict:  # type: ignore[type-arg]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"web-{i}", "labels": {"app": "web", "shard": str(i % 10)}},
            "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}


def _writes(store: MemoryCluster, pods: int) -> None:
    for i in range(pods):
        store.create(_pod(i))
    for i in range(pods):
        pod = store.get("Pod", "default", f"web-{i}")
        store.update_status({**pod, "status": {"phase": "Running"}})


def best(fn: Callable[[], float], repeat: int = 3) -> float:
    return min(fn() for _ in range(repeat))


def in_memory(pods: int) -> float:
    store = MemoryCluster(clock=time.time, feed_limit=1000)
    t = time.perf_counter()
    _writes(store, pods)
    return time.perf_counter() - t


def persistent(pods: int) -> float:
    with tempfile.TemporaryDirectory() as data:
        store = MemoryCluster.open(data, clock=time.time, feed_limit=1000)
        t = time.perf_counter()
        _writes(store, pods)
        took = time.perf_counter() - t
        store.close()
        return took


def reopen(pods: int) -> float:
    with tempfile.TemporaryDirectory() as data:
        store = MemoryCluster.open(data, clock=time.time, feed_limit=1000)
        _writes(store, pods)
        store.close()
        t = time.perf_counter()
        again = MemoryCluster.open(data, clock=time.time)
        took = time.perf_counter() - t
        assert len(again) == pods
        again.close()
        return took


def fan_out(pods: int) -> tuple[float, int]:
    store = MemoryCluster(clock=time.time, feed_limit=1000, watch_buffer=10 * pods)
    watches = [store.watch("Pod", label_selector=f"app=web,shard={i % 10}") for i in range(100)]
    t = time.perf_counter()
    _writes(store, pods // 2)
    took = time.perf_counter() - t
    return took, sum(len(w.drain()) for w in watches)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=10_000)
    args = parser.parse_args(argv)
    n = args.pods
    print(f"python {sys.version.split()[0]}; command: .venv/bin/python bench/store.py --pods {n}")
    print("| case | seconds | rate |")
    print("|---|---|---|")
    for name, fn in (("in memory", in_memory), ("SQLite (WAL, synchronous=NORMAL)", persistent)):
        s = best(lambda fn=fn: fn(n))  # type: ignore[misc]
        print(f"| {2 * n:,} writes {name} | {s:.3f} | {2 * n / s:,.0f} writes/s |")
    s = best(lambda: reopen(n))
    print(f"| reopen a data directory of {n:,} pods | {s:.3f} | {n / s:,.0f} objects/s |")
    runs = [fan_out(n) for _ in range(3)]
    took, events = min(runs)
    print(f"| {n:,} writes, 100 selector watches | {took:.3f} | {events / took:,.0f} events delivered/s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
