"""States per second and state counts of ``rollwise explore`` for every strategy x podManagementPolicy.

Run: `.venv/bin/python bench/explore.py [--replicas 3] [--template-changes 1] [--faults 1] [--user-actions 1]
[--perturb LIST] [--only LABEL] [--json]`. Each row is one exhaustive exploration within the bounds; the figures are
times on this machine, so compare rows, not machines. ``cpu s`` is the process's CPU time (what a shared
machine does not inflate); ``states/s`` is states per CPU second. ``--json`` prints one JSON document instead:
``{"cases": [{"strategy", "policy", "states", "transitions", "cpu_s", ...}], "total": {"states", "cpu_s"}}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.explore import Bounds, explore, initial_node
from rollwise.explore.model import perturbations_of

STRATEGIES: list[tuple[str, dict[str, Any], dict[str, str]]] = [
    ("RollingUpdate", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, {}),
    ("RollingUpdate maxUnavailable=2", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}, {}),
    ("OnDelete", {"type": "OnDelete"}, {}),
    ("Recreate", {"type": "Recreate"}, {}),
    ("EnforcedRollingUpdate", {"type": "EnforcedRollingUpdate"}, {}),
    ("QuorumAware", {"type": "OnDelete"}, {"rollwise.dev/update-policy": "QuorumAware"}),
]
POLICIES = ("OrderedReady", "Parallel")


def manifest(strategy: dict[str, Any], policy: str, annotations: dict[str, str], replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "web", **({"annotations": annotations} if annotations else {})},
        "spec": {
            "replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "podManagementPolicy": policy,
            "updateStrategy": strategy,
            "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete", "whenDeleted": "Retain"},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                      "spec": {"accessModes": ["ReadWriteOnce"],
                                               "resources": {"requests": {"storage": "1Gi"}}}}],
        },
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--template-changes", type=int, default=1)
    ap.add_argument("--faults", type=int, default=1)
    ap.add_argument("--user-actions", type=int, default=1)
    ap.add_argument("--perturb", default="", help="as rollwise explore's: stale[:K], crash, burst")
    ap.add_argument("--no-read-your-writes", dest="read_your_writes", action="store_false")
    ap.add_argument("--max-states", type=int, default=500_000)
    ap.add_argument("--only", default="", help="run only the strategies whose label starts with this")
    ap.add_argument("--json", action="store_true", help="print one JSON document of the figures")
    args = ap.parse_args(argv)
    say = (lambda *_a, **_k: None) if args.json else print
    switches, depth = perturbations_of(s for s in args.perturb.split(",") if s)
    bounds = Bounds(replicas=args.replicas, template_changes=args.template_changes, faults=args.faults,
                    user_actions=args.user_actions, max_states=args.max_states, perturbations=switches,
                    stale_depth=depth, read_your_writes=args.read_your_writes)
    say("command: .venv/bin/python bench/explore.py " + " ".join(argv))
    say(f"{'strategy':32} {'policy':13} {'states':>8} {'transitions':>11} {'wall s':>8} {'cpu s':>8} "
        f"{'states/s':>9} {'exhaustive':>10}  violations")
    total_states = total_seconds = 0.0
    cases: list[dict[str, Any]] = []
    for label, strategy, notes in STRATEGIES:
        if not label.startswith(args.only):
            continue
        for policy in POLICIES:
            start = initial_node(manifest(strategy, policy, notes, args.replicas), gates=FeatureGates(),
                                 bounds=bounds)
            began = time.process_time()
            result = explore(start, bounds)
            cpu = time.process_time() - began
            total_states += result.states
            total_seconds += cpu
            found = ", ".join(v.invariant for v in result.violations) or "-"
            cases.append({"strategy": label, "policy": policy, "states": result.states,
                          "transitions": result.transitions, "cpu_s": round(cpu, 4),
                          "wall_s": round(result.seconds, 4), "complete": result.complete,
                          "violations": [v.invariant for v in result.violations]})
            say(f"{label:32} {policy:13} {result.states:>8} {result.transitions:>11} {result.seconds:>8.2f} "
                f"{cpu:>8.2f} {result.states / cpu:>9.0f} {'yes' if result.complete else 'NO':>10}  {found}",
                flush=True)
    if args.json:
        print(json.dumps({"cases": cases, "total": {"states": int(total_states), "cpu_s": round(total_seconds, 4)}}))
    else:
        print(f"total: {int(total_states)} states in {total_seconds:.1f} CPU s "
              f"({total_states / total_seconds:.0f} states/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
