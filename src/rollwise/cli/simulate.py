"""``rollwise simulate FILE [--json] [--strategy TYPE] [--feature-gates ...]``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rollwise.api.errors import InvalidObject
from rollwise.cli.options import check_plot_path, load_with_overrides
from rollwise.cli.progress import run_with_progress
from rollwise.cli.render import print_invalid, render_result
from rollwise.runtime.trace import DecisionLog
from rollwise.scenario.expect import check_expectations

__all__ = ["add_simulate"]


def add_simulate(sub: Any) -> None:
    p = sub.add_parser("simulate", help="run a scenario in virtual time on the embedded simulated cluster",
                       description="Run a scenario file in virtual time and report what the controllers did.")
    p.add_argument("file", metavar="FILE", help="scenario file (YAML or JSON, UTF-8; see spec/simulate.md)")
    p.add_argument("--json", action="store_true", help="print the result document as JSON (nothing else on stdout)")
    p.add_argument("--strategy", metavar="TYPE",
                   help="override every StatefulSet's update strategy: RollingUpdate[:maxUnavailable=N,partition=N], "
                        "OnDelete, Recreate, EnforcedRollingUpdate, QuorumAware, InPlace[:maxUnavailable=N,...] "
                        "(RollingUpdate with podUpdatePolicy InPlaceIfPossible), Canary[:maxUnavailable=N,...] "
                        "(RollingUpdate keeping the file's canary steps)")
    p.add_argument("--feature-gates", metavar="NAME=BOOL,...", default="",
                   help="override the scenario's feature gates, e.g. MaxUnavailableStatefulSet=false")
    p.add_argument("--events", action="store_true", help="with the readable summary, list every event too")
    p.add_argument("--plot", metavar="OUT.png", help="write a timeline of the run (one lane per ordinal); the "
                                                    "extension picks the format: .png, .svg or .pdf")
    p.add_argument("--live", action="store_true",
                   help="play the run in the terminal view of `rollwise get --watch` (then print the summary)")
    p.add_argument("--speed", type=_speed, default=10.0, metavar="N",
                   help="with --live: virtual seconds per wall second (default 10)")
    p.add_argument("--trace", metavar="FILE", help="append every controller decision to FILE as JSON lines (the "
                                                "view it decided from and its actions), for rollwise check-trace")
    p.set_defaults(run=run_simulate)


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a number greater than 0")
    return value


def run_simulate(args: argparse.Namespace) -> int:
    try:
        scenario = load_with_overrides(args.file, feature_gates=args.feature_gates, strategy=args.strategy)
        if args.plot:
            check_plot_path(args.plot)
    except InvalidObject as err:
        print_invalid(err)
        return 2
    try:
        trace = DecisionLog(args.trace) if args.trace else None
    except OSError as err:
        print(f"error: --trace {args.trace}: {err.strerror}", file=sys.stderr)
        return 2
    try:
        if args.live and not args.json:
            from rollwise.cli.live import run_live  # noqa: PLC0415 - the live view loads only when asked for

            result = run_live(scenario, speed=args.speed, trace=trace)
        else:
            result = run_with_progress(scenario, enabled=not args.json and sys.stderr.isatty(), trace=trace)
    finally:
        if trace is not None:
            trace.close()
    result["strategy"] = args.strategy or None
    if args.plot:
        from rollwise.cli.plot import plot_timelines  # noqa: PLC0415 - matplotlib loads only for a plot

        try:
            plot_timelines([result], args.plot)
        except InvalidObject as err:
            print_invalid(err)
            return 2
    failures = check_expectations(scenario.expect, result["summary"])
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        render_result(result, show_events=args.events, expect_failures=failures,
                      limit_seconds=scenario.limit_seconds)
        if args.plot:
            print(f"timeline written to {args.plot}")
    for failure in failures:
        print(f"expect failed: {failure}", file=sys.stderr)
    return 1 if failures else 0
