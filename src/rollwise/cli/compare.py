"""``rollwise compare FILE --strategies A,B,...``: one run per strategy, side by side."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from rollwise.api.errors import FieldError, InvalidObject
from rollwise.cli.options import check_plot_path, load_with_overrides
from rollwise.cli.progress import run_with_progress
from rollwise.cli.render import console, figure, print_invalid
from rollwise.scenario.expect import check_expectations
from rollwise.scenario.strategy_override import StrategyOverride, parse_strategy
from rollwise.sim import Scenario

__all__ = ["add_compare", "compare_table", "run_comparison", "stuck_lines"]

DEFAULT_STRATEGIES = "RollingUpdate,RollingUpdate:maxUnavailable=3,Recreate,EnforcedRollingUpdate,QuorumAware"


def add_compare(sub: Any) -> None:
    p = sub.add_parser("compare", help="run a scenario once per strategy and compare the outcomes",
                       description="Run the scenario once per update strategy and show the figures side by side.")
    p.add_argument("file", metavar="FILE", help="scenario file (YAML or JSON, UTF-8; see spec/simulate.md)")
    p.add_argument("--strategies", default=DEFAULT_STRATEGIES,
                   help=f"comma-separated strategies (default: {DEFAULT_STRATEGIES}); each as for simulate "
                        "--strategy, e.g. RollingUpdate:maxUnavailable=3 or "
                        "RollingUpdate:podUpdatePolicy=InPlaceIfPossible (in-place image updates) or "
                        "QuorumAware:leaderTransfer=true (docs/quorum-aware.md)")
    p.add_argument("--json", action="store_true", help='print {"runs": [result, ...]} and nothing else')
    p.add_argument("--plot", metavar="OUT.png",
                   help="write a timeline with one panel per strategy (.png, .svg or .pdf)")
    p.add_argument("--feature-gates", metavar="NAME=BOOL,...", default="", help="as for simulate")
    p.set_defaults(run=run_compare)


def parse_strategies(text: str) -> list[StrategyOverride]:
    """Every strategy of the list, or InvalidObject naming each bad one."""
    overrides, errors = [], []
    items = _split(text)
    if not items:
        errors.append(FieldError(path="--strategies", value=text, rule="at least one strategy is required"))
    for i, item in enumerate(items):
        override, problems = parse_strategy(item, path=f"--strategies[{i}]")
        errors += problems
        if override is not None:
            overrides.append(override)
    if errors:
        raise InvalidObject(errors, source="--strategies")
    return overrides


def _split(text: str) -> list[str]:
    """Split on commas that start a new strategy (``RollingUpdate:maxUnavailable=2,partition=1,Recreate``)."""
    items: list[str] = []
    for part in filter(None, (s.strip() for s in text.split(","))):
        if items and "=" in part and ":" not in part.split("=")[0] and not part[0].isupper():
            items[-1] += "," + part  # an option of the previous strategy
        else:
            items.append(part)
    return items


def run_comparison(scenario: Scenario, overrides: Sequence[StrategyOverride], *,
                   progress: bool = False) -> list[dict[str, Any]]:
    runs = []
    for override in overrides:
        variant = scenario.with_strategy(override).checked()
        result = run_with_progress(variant, label=override.text, enabled=progress)
        result["strategy"] = override.text
        runs.append(result)
    return runs


def run_compare(args: argparse.Namespace) -> int:
    try:
        overrides = parse_strategies(args.strategies)
        scenario = load_with_overrides(args.file, feature_gates=args.feature_gates)
        for override in overrides:
            try:
                scenario.with_strategy(override).checked()
            except InvalidObject as err:
                raise InvalidObject(err.errors, source=f"{args.file} with --strategies {override.text}") from err
        if args.plot:
            check_plot_path(args.plot)
    except InvalidObject as err:
        print_invalid(err)
        return 2
    runs = run_comparison(scenario, overrides, progress=not args.json and sys.stderr.isatty())
    if args.plot:
        from rollwise.cli.plot import plot_timelines  # noqa: PLC0415 - matplotlib loads only for a plot

        try:
            plot_timelines(runs, args.plot, titles=[r["strategy"] for r in runs])
        except InvalidObject as err:
            print_invalid(err)
            return 2
    failures = [f"{r['strategy']}: {f}" for r in runs for f in check_expectations(scenario.expect, r["summary"])]
    if args.json:
        json.dump({"runs": runs}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        out = console()
        out.print(f"[bold]{escape(scenario.name)}[/bold]")
        if scenario.description:
            out.print(f"[italic]{escape(scenario.description.strip())}[/italic]")
        out.print(compare_table(runs))
        for line in stuck_lines(runs):
            out.print(f"[red]stuck[/red] {escape(line)}")
        for failure in failures:
            out.print(f"[red]expect failed:[/red] {escape(failure)}")
        if args.plot:
            out.print(f"timeline written to {escape(args.plot)}")
    for failure in failures:
        print(f"expect failed: {failure}", file=sys.stderr)
    return 1 if failures else 0


def _stuck_reason(result: Mapping[str, Any], set_name: str) -> str:
    for sts in result["final"]["statefulSets"]:
        if sts["name"] != set_name:
            continue
        for c in (sts.get("status") or {}).get("conditions") or ():
            if c.get("type") == "Progressing":
                return str(c.get("message") or c.get("reason") or "")
    return ""


def compare_table(runs: Sequence[Mapping[str, Any]]) -> Table:
    """One row per (strategy, StatefulSet); the quorum columns only when some set runs a quorum model."""
    quorum = any(fig.get("quorumLossSeconds") is not None for r in runs for fig in r["summary"].values())
    table = Table(title="Comparison (virtual time)")
    columns = ["strategy", "set", "done", "rollout s", "max unav.", "unav. pod-s"]
    if quorum:
        columns += ["quorum loss s", "leaderless s", "elections", "leader moves"]
    in_place = any(fig.get("podInPlaceUpdates") for r in runs for fig in r["summary"].values())
    ends = [_ends_at(r) for r in runs]
    aborts = any("aborted" in e.values() for e in ends)  # a canary's analysis or a person stopped a rollout
    columns += ["deletes", *(["in place"] if in_place else []), *(["ends at"] if aborts else []), "writes"]
    for col in columns:
        left = col in ("strategy", "set", "done", "ends at")
        table.add_column(col, justify="left" if left else "right", no_wrap=True)
    for result, end in zip(runs, ends, strict=True):
        for name, fig in result["summary"].items():
            row = [escape(str(result["strategy"])), escape(name), "yes" if fig["completed"] else "[red]no[/red]",
                   figure(fig["rolloutSeconds"]), str(fig["maxUnavailableObserved"]),
                   figure(fig["unavailablePodSeconds"])]
            if quorum:
                row += [figure(fig["quorumLossSeconds"]), figure(fig.get("leaderlessSeconds")),
                        figure(fig["leaderElections"]),
                        str(fig.get("leaderChanges", "-"))]
            row += [str(fig["podDeletions"]), *([str(fig.get("podInPlaceUpdates", 0))] if in_place else []),
                    *([_ENDS_AT[end.get(name, "")]] if aborts else []), str(result["apiWrites"])]
            table.add_row(*row)
    return table


_ENDS_AT = {"aborted": "stable (aborted)", "update": "update revision", "": "-"}


def _ends_at(result: Mapping[str, Any]) -> dict[str, str]:
    """Per set of a run: ``aborted`` when its rollout ended back at the stable revision (api/abort.py), ``update``
    when every pod runs the update revision, "" otherwise."""
    out = {}
    for sts in (result.get("final") or {}).get("statefulSets") or ():
        status = sts.get("status") or {}
        done = status.get("currentRevision") == status.get("updateRevision")
        out[str(sts.get("name"))] = "aborted" if status.get("abort") is True else "update" if done else ""
    return out


def stuck_lines(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Why each run that did not complete is stuck, in the controller's own words."""
    return [f"{result['strategy']} / {name}: {_stuck_reason(result, name)}"
            for result in runs for name, fig in result["summary"].items() if not fig["completed"]]
