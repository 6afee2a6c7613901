"""Simulator throughput at scale (the figures in README's performance table).

- one Parallel set rolling with maxUnavailable 10% at 100, 1,000 and 5,000 replicas (pods take 30 s to start,
  10 s to become ready, 30 s to terminate), from creation to the completed update;
- 200 sets of 5 replicas rolling at once;
- a 5-member quorum set rolled by the quorum-aware controller while two members fail.

Run: `.venv/bin/python bench/scale.py [--quick] [--repeat N]`. Each case keeps the best of N runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from rollwise.drivers.sim import parse_scenario, run_scenario

TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}


def _set(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": name}}, "spec": TEMPLATE["spec"]}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template, **spec}}


def _image(name: str, image: str = "app:v2") -> dict[str, Any]:
    return {"patch": {"kind": "StatefulSet", "name": name, "merge": {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": image}]}}}}}}


def big_rollout(replicas: int) -> dict[str, Any]:
    return {
        "name": f"parallel-{replicas}",
        "kubelet": {"startSeconds": 30, "readySeconds": 10, "terminationSeconds": 30},
        "objects": [_set("web", replicas, podManagementPolicy="Parallel",
                         updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}})],
        "steps": [{"waitFor": {"ready": "web", "timeout": 100000}}, _image("web"),
                  {"waitFor": {"rolloutComplete": "web", "timeout": 100000}}],
    }


def many_sets(count: int = 200, replicas: int = 5) -> dict[str, Any]:
    names = [f"s{i:03d}" for i in range(count)]
    return {
        "name": f"{count}-sets",
        "objects": [_set(n, replicas, podManagementPolicy="Parallel") for n in names],
        "steps": [{"after": 60}, *(_image(n) for n in names), {"after": 1000}],
    }


def quorum_with_faults() -> dict[str, Any]:
    spec = _set("etcd", 5, podManagementPolicy="Parallel", updateStrategy={"type": "OnDelete"})
    spec["metadata"]["annotations"] = {"rollwise.dev/update-policy": "QuorumAware"}
    return {
        "name": "quorum-5-faults",
        "kubelet": {"startSeconds": 3, "readySeconds": 1, "terminationSeconds": 2,
                    "apps": {"etcd": {"model": "quorum"}}},
        "objects": [spec],
        "steps": [{"waitFor": {"ready": "etcd", "timeout": 600}},
                  {"podFault": {"pod": "etcd-1", "fault": "crash"}}, {"after": 5},
                  _image("etcd"), {"after": 40}, {"podFault": {"pod": "etcd-4", "fault": "kill"}},
                  {"waitFor": {"rolloutComplete": "etcd", "timeout": 3000}}],
    }


def measure(name: str, build: Callable[[], dict[str, Any]], repeat: int) -> float:
    best = float("inf")
    result: dict[str, Any] = {}
    for _ in range(repeat):
        scenario = parse_scenario(build())
        t0 = time.perf_counter()
        result = run_scenario(scenario)
        best = min(best, time.perf_counter() - t0)
    virtual = result["endedAt"]
    done = sum(1 for s in result["summary"].values() if s["completed"])
    print(f"| {name} | {best:.3f} | {virtual:g} | {virtual / best:,.0f} | {len(result['events']) / best:,.0f} | "
          f"{done}/{len(result['summary'])} |", flush=True)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="skip the 5,000-replica case")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}; command: .venv/bin/python bench/scale.py --repeat {args.repeat}")
    print("| case | wall s | virtual s | virtual/wall | events/s | completed |")
    print("|---|---|---|---|---|---|")
    walls = {}
    for n in ([100, 1000] if args.quick else [100, 1000, 5000]):
        walls[n] = measure(f"{n:,} replicas, Parallel, maxUnavailable 10%", lambda n=n: big_rollout(n),
                           1 if n >= 5000 else args.repeat)
    measure("200 sets x 5 replicas rolling at once", many_sets, args.repeat)
    measure("5-member quorum set, QuorumAware, 2 faults", quorum_with_faults, args.repeat)
    if 5000 in walls:
        print(f"growth: 100 -> 1,000 replicas x{walls[1000] / walls[100]:.1f}; "
              f"1,000 -> 5,000 x{walls[5000] / walls[1000]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
