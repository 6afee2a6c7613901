"""``rollwise demo``: the KEPs' and DEP-07's stories, run under each strategy, with tables and timeline plots."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rich.markup import escape

from rollwise.api.errors import InvalidObject
from rollwise.api.strategies import ENFORCED_ROLLING_UPDATE, QUORUM_AWARE_POLICY, RECREATE, ROLLING_UPDATE
from rollwise.cli.compare import compare_table, stuck_lines
from rollwise.cli.extras import require_extra
from rollwise.cli.options import check_output_dir
from rollwise.cli.progress import run_with_progress
from rollwise.cli.render import console as make_console
from rollwise.cli.render import print_invalid
from rollwise.scenario.strategy_override import parse_strategy
from rollwise.sim import load_scenario

__all__ = ["DEMOS", "add_demo", "run_demo_cases"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Variant:
    label: str
    strategy: str | None = None
    gates: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Demo:
    file: str
    story: str
    variants: tuple[Variant, ...]


DEMOS = (
    Demo(
        file="image-typo-fixed.yaml",
        story="A typo in the image reaches a 4-replica OrderedReady set and the fix follows a minute later. "
              "RollingUpdate never replaces the broken pod, even after the fix (kubernetes#67250); the "
              "progress deadline says so. Recreate (KEP-3541) clears every old pod and starts over, with full "
              "downtime; EnforcedRollingUpdate (the KEP's earlier draft) force-replaces the broken pod and goes "
              "on in order, one pod down at a time.",
        variants=tuple(Variant(label=kind, strategy=kind)
                       for kind in (ROLLING_UPDATE, RECREATE, ENFORCED_ROLLING_UPDATE)),
    ),
    Demo(
        file="max-unavailable-6.yaml",
        story="KEP-961's manual test: six Parallel replicas rolled one at a time, then with maxUnavailable 3 — "
              "two waves instead of six, never more than three ordinals down.",
        variants=(Variant(label=f"{ROLLING_UPDATE} (maxUnavailable 1)", strategy=ROLLING_UPDATE),
                  Variant(label=f"{ROLLING_UPDATE}:maxUnavailable=3", strategy=f"{ROLLING_UPDATE}:maxUnavailable=3")),
    ),
    Demo(
        file="etcd-member-down.yaml",
        story="DEP-07's example: a 3-member etcd cluster with member 0 already crash-looping gets a new image. "
              "The rolling update of Kubernetes 1.34-1.36 (maxUnavailable gate off) deletes a healthy member "
              "first and loses quorum; the 1.37 rolling update replaces the dead member first but takes the "
              "others in ordinal order whoever leads; the quorum-aware controller replaces the dead member, "
              "waits for it to rejoin, then a follower, and the leader last: no quorum loss.",
        variants=(Variant(label=f"{ROLLING_UPDATE} (1.34-1.36)", strategy=ROLLING_UPDATE,
                          gates=(("MaxUnavailableStatefulSet", False),)),
                  Variant(label=f"{ROLLING_UPDATE} (1.37)", strategy=ROLLING_UPDATE),
                  Variant(label=QUORUM_AWARE_POLICY, strategy=QUORUM_AWARE_POLICY)),
    ),
    Demo(
        file="partitioned-canary.yaml",
        story="A partitioned canary (StatefulSet concepts): the new image goes to web-3 only; a pod below the "
              "partition deleted meanwhile comes back at the old revision; dropping the partition to 0 rolls "
              "the rest — one at a time, or two at a time with maxUnavailable 2.",
        variants=(Variant(label=ROLLING_UPDATE, strategy=None),
                  Variant(label=f"{ROLLING_UPDATE}:maxUnavailable=2", strategy=f"{ROLLING_UPDATE}:maxUnavailable=2")),
    ),
)


def add_demo(sub: Any) -> None:
    p = sub.add_parser("demo", help="run the bundled stories from the KEPs and DEP-07 under each strategy",
                       description="Run the bundled scenarios (taken from the KEPs and DEP-07) under each "
                                   "strategy, print the comparison tables and write timeline plots.")
    p.add_argument("--out", default="rollwise-demo", metavar="DIR",
                   help="folder for the plots, created if missing (default: %(default)s)")
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    p.set_defaults(run=run_demo)


def example_path(name: str) -> Path:
    return Path(str(resources.files("rollwise") / "examples" / name))


def run_demo_cases(demos: tuple[Demo, ...] = DEMOS, *,
                   progress: bool = False) -> list[tuple[Demo, list[dict[str, Any]]]]:
    out = []
    for demo in demos:
        base = load_scenario(example_path(demo.file))
        runs = []
        for variant in demo.variants:
            scenario = base.with_gates(dict(variant.gates))
            if variant.strategy is not None:
                override, errors = parse_strategy(variant.strategy)
                assert override is not None, errors
                scenario = scenario.with_strategy(override)
            result = run_with_progress(scenario.checked(), label=variant.label, enabled=progress)
            result["strategy"] = variant.label
            runs.append(result)
        out.append((demo, runs))
    return out


def _plot_pool(jobs: int) -> ProcessPoolExecutor:
    """Worker processes for the timelines: each imports matplotlib while the stories run, then draws one story's
    picture while the next story runs (drawing takes longer than simulating)."""
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_load_plotting)


def _load_plotting() -> None:
    import rollwise.cli.plot  # noqa: F401, PLC0415 - matplotlib loads only where plots are drawn


def _draw(runs: list[dict[str, Any]], out: Path) -> str | None:
    """Draw one story's timeline in a worker; a refusal comes back as its message (an ``InvalidObject`` does not
    survive the trip between processes whole)."""
    from rollwise.cli.plot import plot_timelines  # noqa: PLC0415 - matplotlib loads only where plots are drawn

    try:
        plot_timelines(runs, out, titles=[r["strategy"] for r in runs])
    except InvalidObject as err:
        return str(err)
    return None


def run_demo(args: argparse.Namespace) -> int:
    if not args.no_plots:
        require_extra("matplotlib", "rollwise demo's plots (--no-plots skips them)")
        try:
            check_output_dir(args.out)
        except InvalidObject as err:
            print_invalid(err)
            return 2
    console = make_console()
    out_dir = Path(args.out)
    pool = None if args.no_plots else _plot_pool(max(1, min(len(DEMOS), os.cpu_count() or 1)))
    drawn: list[Future[str | None]] = []
    try:
        for demo, runs in run_demo_cases(progress=sys.stderr.isatty()):
            console.rule(f"[bold]{runs[0]['scenario']}[/bold]  ({demo.file})")
            console.print(demo.story)
            console.print(compare_table(runs))
            for line in stuck_lines(runs):
                console.print(f"[red]stuck[/red] {escape(line)}")
            if pool is not None:
                out = out_dir / f"{Path(demo.file).stem}.png"
                drawn.append(pool.submit(_draw, runs, out))
                console.print(f"timeline: {out}")
            console.print()
        for future in drawn:
            failure = future.result()  # after every table was printed
            if failure is not None:
                print(failure, file=sys.stderr)
                return 2
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    if pool is not None:
        console.print(f"plots written to {out_dir.resolve()}")
    return 0
