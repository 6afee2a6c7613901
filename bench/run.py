"""Benchmarks: wall time of simulated rollouts. Run with `make bench` (or `.venv/bin/python bench/run.py`).

Figures printed: wall seconds, virtual seconds, the virtual-to-wall ratio, and events per wall second. Each
case is run `--repeat` times and the best wall time is kept (the machine's other load only ever adds time).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from rollwise.drivers.sim import parse_scenario, run_scenario


def rollout(replicas: int, *, policy: str = "Parallel", max_unavailable: int | str = "10%", start: float = 30,
            ready: float = 10, termination: float = 30) -> dict[str, Any]:
    """Create a set, wait until Ready, change the image, wait for the rollout to complete."""
    return {
        "name": f"rollout-{replicas}",
        "kubelet": {"startSeconds": start, "readySeconds": ready, "terminationSeconds": termination},
        "objects": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {
                "replicas": replicas, "podManagementPolicy": policy,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable}},
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
            },
        }],
        "steps": [
            {"waitFor": {"ready": "web", "timeout": 100000}},
            {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {"template": {"spec": {
                "containers": [{"name": "app", "image": "app:v2"}]}}}}}},
            {"waitFor": {"rolloutComplete": "web", "timeout": 100000}},
        ],
    }


def measure(name: str, build: Callable[[], dict[str, Any]], repeat: int) -> None:
    best = float("inf")
    result: dict[str, Any] = {}
    for _ in range(repeat):
        scenario = parse_scenario(build())
        t0 = time.perf_counter()
        result = run_scenario(scenario)
        best = min(best, time.perf_counter() - t0)
    virtual = result["endedAt"]
    events = len(result["events"])
    done = all(s["completed"] for s in result["summary"].values())
    print(f"| {name} | {best:.3f} | {virtual:g} | {virtual / best:,.0f} | {events / best:,.0f} | "
          f"{'yes' if done else 'NO'} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args(argv)
    sizes = [5, 100] if args.quick else [5, 100, 1000]
    print(f"python {sys.version.split()[0]}; command: .venv/bin/python bench/run.py --repeat {args.repeat}")
    print("| case | wall s | virtual s | virtual/wall | events/s | completed |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        measure(f"{n} replicas, Parallel, maxUnavailable 10%", lambda n=n: rollout(n), args.repeat)
    measure("5 replicas, OrderedReady, maxUnavailable 1", lambda: rollout(5, policy="OrderedReady",
                                                                          max_unavailable=1), args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
