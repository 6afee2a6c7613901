"""Simulator throughput at scale (the figures in README's performance table).

- one Parallel set rolling with maxUnavailable 10% at 100, 1,000, 5,000 and 10,000 replicas (pods take 30 s to
  start, 10 s to become ready, 30 s to terminate), from creation to the completed update;
- one OrderedReady set (the default policy) rolling one pod at a time at 100, 300 and 1,000 replicas (start 5 s,
  ready 2 s, termination 3 s), from creation to the completed update: every pod is its own instant, twice;
- the OrderedReady rollout under EnforcedRollingUpdate and Recreate at 1,000 and 10,000 replicas;
- 200 sets of 5 replicas rolling at once;
- a 5-member quorum set rolled by the quorum-aware controller while two members fail.

Run: `.venv/bin/python bench/scale.py [--quick] [--repeat N] [--ordered-max N] [--only TEXT]`. Each case keeps the
best of N runs (one run for the cases over 10 s). `--quick` stops at 1,000 replicas; `--only Parallel` runs the cases
whose name holds that text (to repeat one growth figure without the rest).
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from rollwise.sim import parse_scenario, run_scenario

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


def ordered_rollout(replicas: int) -> dict[str, Any]:
    return {
        "name": f"ordered-ready-{replicas}",
        "kubelet": {"startSeconds": 5, "readySeconds": 2, "terminationSeconds": 3},
        "limitSeconds": 2_592_000,
        "objects": [_set("web", replicas)],
        "steps": [{"waitFor": {"ready": "web", "timeout": 1_000_000}}, _image("web"),
                  {"waitFor": {"rolloutComplete": "web", "timeout": 1_000_000}}],
    }


def strategy_rollout(replicas: int, strategy: str) -> dict[str, Any]:
    """``ordered_rollout`` under another update strategy (OrderedReady still)."""
    doc = ordered_rollout(replicas)
    doc["name"] = f"{strategy}-{replicas}"
    doc["objects"][0]["spec"]["updateStrategy"] = {"type": strategy}
    return doc


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


def measure(name: str, build: Callable[[], dict[str, Any]], repeat: int, only: str = "") -> float:
    """Best of ``repeat`` runs (one when a run takes over 10 s); wall and CPU seconds are both printed, since on a
    shared machine the wall time also measures the neighbours. Returns the CPU seconds (nan for a case ``only``
    leaves out)."""
    if only not in name:
        return float("nan")
    best, best_cpu = float("inf"), float("inf")
    result: dict[str, Any] = {}
    for i in range(repeat):
        scenario = parse_scenario(build())
        t0, c0 = time.perf_counter(), time.process_time()
        result = run_scenario(scenario)
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
        if i == 0 and best > 10:  # one run of a slow case is figure enough
            break
    virtual = result["endedAt"]
    done = sum(1 for s in result["summary"].values() if s["completed"])
    print(f"| {name} | {best:.3f} | {best_cpu:.3f} | {virtual:g} | {virtual / best_cpu:,.0f} | "
          f"{len(result['events']) / best_cpu:,.0f} | {done}/{len(result['summary'])} |", flush=True)
    return best_cpu


def _growth(walls: dict[int, float]) -> str:
    sizes = sorted(n for n, cpu in walls.items() if not math.isnan(cpu))  # nan: a case --only left out
    return "; ".join(f"{a:,} -> {b:,} x{walls[b] / walls[a]:.1f}" for a, b in pairwise(sizes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="stop at 1,000 replicas")
    parser.add_argument("--ordered-max", type=int, default=10000, metavar="N",
                        help="largest OrderedReady set to run (default %(default)s)")
    parser.add_argument("--only", default="", metavar="TEXT", help="run only the cases whose name holds TEXT")
    args = parser.parse_args(argv)
    if args.quick:
        args.ordered_max = min(args.ordered_max, 1000)
    command = shlex.join(["bench/scale.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"python {sys.version.split()[0]}; command: .venv/bin/python {command}")
    print("| case | wall s | cpu s | virtual s | virtual/cpu | events/cpu s | completed |")
    print("|---|---|---|---|---|---|---|")
    parallel: dict[int, float] = {}
    for n in [100, 1000] if args.quick else [100, 1000, 5000, 10000]:
        parallel[n] = measure(f"{n:,} replicas, Parallel, maxUnavailable 10%", lambda n=n: big_rollout(n),
                              args.repeat, args.only)
    ordered: dict[int, float] = {}
    for n in [k for k in (100, 300, 1000, 3000, 10000) if k <= args.ordered_max]:
        ordered[n] = measure(f"{n:,} replicas, OrderedReady, one at a time", lambda n=n: ordered_rollout(n),
                             args.repeat, args.only)
    strategies: dict[str, dict[int, float]] = {}
    for strategy in ("EnforcedRollingUpdate", "Recreate"):
        for n in [k for k in (1000, 10000) if k <= args.ordered_max]:
            strategies.setdefault(strategy, {})[n] = measure(
                f"{n:,} replicas, OrderedReady, {strategy}", lambda n=n, s=strategy: strategy_rollout(n, s),
                args.repeat, args.only)
    measure("200 sets x 5 replicas rolling at once", many_sets, args.repeat, args.only)
    measure("5-member quorum set, QuorumAware, 2 faults", quorum_with_faults, args.repeat, args.only)
    groups = {"Parallel": parallel, "OrderedReady": ordered,
              **{f"OrderedReady {strategy}": walls for strategy, walls in strategies.items()}}
    for group, walls in groups.items():
        if growth := _growth(walls):
            print(f"growth (cpu), {group}: {growth}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
