"""Rollout time of each update strategy on a 30-replica set, against its lower bound.

Lower bound = waves x (termination + start + ready + minReadySeconds): the time the strategy's own rules force,
with a controller that reacts instantly. Run: `.venv/bin/python bench/strategies.py`.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from rollwise.sim import parse_scenario, run_scenario

REPLICAS = 30
START, READY, TERMINATION, MIN_READY = 5.0, 2.0, 3.0, 0.0
PER_POD = TERMINATION + START + READY + MIN_READY

CASES: list[tuple[str, str, dict[str, Any], float]] = [
    ("RollingUpdate", "OrderedReady", {"type": "RollingUpdate"}, REPLICAS * PER_POD),
    ("RollingUpdate maxUnavailable=3", "OrderedReady",
     {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}},
     # OrderedReady: a wave of 3 deletions, then the three come back one after another.
     math.ceil(REPLICAS / 3) * (TERMINATION + 3 * (START + READY + MIN_READY))),
    ("RollingUpdate maxUnavailable=3", "Parallel",
     {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}}, math.ceil(REPLICAS / 3) * PER_POD),
    ("RollingUpdate maxUnavailable=10%", "Parallel",
     {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}}, math.ceil(REPLICAS / 3) * PER_POD),
    ("Recreate", "OrderedReady", {"type": "Recreate"}, TERMINATION + REPLICAS * (START + READY + MIN_READY)),
    ("Recreate", "Parallel", {"type": "Recreate"}, PER_POD),
    ("EnforcedRollingUpdate", "OrderedReady",
     {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"maxUnavailable": 1}}, REPLICAS * PER_POD),
    ("EnforcedRollingUpdate maxUnavailable=3", "Parallel",
     {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"maxUnavailable": 3}},
     math.ceil(REPLICAS / 3) * PER_POD),
]


def scenario(policy: str, strategy: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "strategies-30",
        "kubelet": {"startSeconds": START, "readySeconds": READY, "terminationSeconds": TERMINATION},
        "objects": [{
            "apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": REPLICAS, "podManagementPolicy": policy, "minReadySeconds": int(MIN_READY),
                     "updateStrategy": strategy, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}},
        }],
        "steps": [
            {"waitFor": {"ready": "web", "timeout": 10000}},
            {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {"template": {"spec": {
                "containers": [{"name": "app", "image": "app:v2"}]}}}}}},
            {"waitFor": {"rolloutComplete": "web", "timeout": 10000}},
        ],
    }


def main() -> int:
    print("command: .venv/bin/python bench/strategies.py")
    print(f"{REPLICAS} replicas; start {START:g} s, ready {READY:g} s, termination {TERMINATION:g} s, "
          f"minReadySeconds {MIN_READY:g}")
    print("| strategy | policy | rollout s | lower bound s | ratio | max unavailable | wall s |")
    print("|---|---|---|---|---|---|---|")
    for name, policy, strategy, bound in CASES:
        t0 = time.perf_counter()
        result = run_scenario(parse_scenario(scenario(policy, strategy)))
        wall = time.perf_counter() - t0
        web = result["summary"]["web"]
        rollout = web["rolloutSeconds"]
        print(f"| {name} | {policy} | {rollout:g} | {bound:g} | {rollout / bound:.2f} | "
              f"{web['maxUnavailableObserved']} | {wall:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
