"""Timelines of big rollouts (docs/images/scale-*.png): what ``--plot`` draws for a set too big for one lane per pod.

- 600 replicas, OrderedReady (the default policy), one pod at a time (start 5 s, ready 2 s, termination 3 s);
- 6,000 replicas, Parallel, maxUnavailable 10% (start 30 s, ready 10 s, termination 30 s);
- 6,000 replicas, OrderedReady, one pod at a time (a day and a half of virtual time).

Run: `.venv/bin/python bench/timelines.py [--out DIR]`; prints the wall time of each run and of each plot.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from rollwise.cli.plot import plot_timelines
from rollwise.sim import parse_scenario, run_scenario
from scale import big_rollout, ordered_rollout

CASES = (("scale-600-ordered-ready.png", "600 replicas, OrderedReady", lambda: ordered_rollout(600)),
         ("scale-6000-parallel.png", "6,000 replicas, Parallel, maxUnavailable 10%", lambda: big_rollout(6000)),
         ("scale-6000-ordered-ready.png", "6,000 replicas, OrderedReady", lambda: ordered_rollout(6000)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="docs/images", metavar="DIR")
    args = parser.parse_args(argv)
    print(f"command: .venv/bin/python bench/timelines.py --out {args.out}")
    for file, title, build in CASES:
        t0 = time.perf_counter()
        result: dict[str, Any] = run_scenario(parse_scenario(build()))
        t1 = time.perf_counter()
        path = plot_timelines([result], Path(args.out) / file, titles=[title])
        print(f"{path}: simulated in {t1 - t0:.1f} s, drawn in {time.perf_counter() - t1:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
