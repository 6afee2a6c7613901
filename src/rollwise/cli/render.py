"""Presentation only: readable summaries with rich, and invalid-input messages on stderr."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

from rollwise.api.errors import InvalidObject

__all__ = ["describe_event", "print_invalid", "render_result"]

_QUIET = {"PodRunning", "PVCCreated", "PVCDeleted"}
_ROUTINE_REASONS = {"SuccessfulCreate", "SuccessfulDelete", "SuccessfulUpdate"}
_TIMELINE_LIMIT = 80


def print_invalid(err: InvalidObject) -> None:
    """``FILE: invalid: PATH: Kind: value: rule``, one problem per line, on stderr."""
    source = err.source or "<input>"
    print(f"{source}: invalid ({len(err.errors)} problem{'s' if len(err.errors) != 1 else ''}):", file=sys.stderr)
    for e in err.errors:
        print(f"  {e}", file=sys.stderr)


def describe_event(ev: Mapping[str, Any]) -> str:
    """One line of plain words for one event of the stream."""
    kind = ev["type"]
    pod = ev.get("pod", "")
    if kind == "Step":
        return f"step {ev['index']}: {ev['action']}"
    if kind == "PodCreated":
        return f"{pod} created at revision {ev.get('revision')} (by {ev.get('by')})"
    if kind == "PodDeleteRequested":
        return f"{pod} deletion requested (revision {ev.get('revision')}, by {ev.get('by')})"
    if kind == "PodGone":
        return f"{pod} gone"
    if kind == "PodReady":
        return f"{pod} Ready"
    if kind == "PodNotReady":
        return f"{pod} not Ready"
    if kind == "PodRunning":
        return f"{pod} Running"
    if kind == "PodFailed":
        return f"{pod} Failed"
    if kind == "ContainerWaiting":
        return f"{pod} container {ev.get('container')} waiting: {ev.get('reason')}"
    if kind == "Event":
        return f"{ev.get('object')} {ev.get('eventType', 'Normal')} {ev.get('reason')}: {ev.get('message')}"
    if kind == "StepRejected":
        return f"step {ev['index']} ({ev['action']}) rejected: {ev.get('message')}"
    if kind == "LeaderChanged":
        return f"{ev.get('statefulSet', '')}: leader is now {pod}" if pod else \
            f"{ev.get('statefulSet', '')}: no leader"
    if kind == "QuorumLost":
        return f"{ev.get('statefulSet', '')}: quorum lost"
    if kind == "QuorumRestored":
        return f"{ev.get('statefulSet', '')}: quorum restored"
    if kind == "WaitTimedOut":
        return f"step {ev['index']}: waitFor timed out"
    rest = ", ".join(f"{k}={v}" for k, v in ev.items() if k not in ("t", "type"))
    return f"{kind} {rest}".strip()


def _figure(value: Any) -> str:
    return "-" if value is None else f"{value:g}"


def waiting_lines(result: Mapping[str, Any]) -> list[str]:
    """For each set that did not complete: its Progressing condition, in its own words."""
    lines = []
    for sts in result["final"]["statefulSets"]:
        fig = result["summary"].get(sts["name"]) or {}
        if fig.get("completed"):
            continue
        for c in (sts.get("status") or {}).get("conditions") or ():
            if c.get("type") == "Progressing":
                lines.append(f"{sts['name']}: Progressing={c.get('status')} ({c.get('reason')}): {c.get('message')}")
    return lines


def _worth_showing(ev: Mapping[str, Any]) -> bool:
    if ev["type"] in _QUIET:
        return False
    return not (ev["type"] == "Event" and ev.get("reason") in _ROUTINE_REASONS)


def render_result(result: Mapping[str, Any], *, show_events: bool = False, expect_failures: list[str] | None = None,
                  console: Console | None = None) -> None:
    out = console or Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    out.print(f"[bold]{result['scenario']}[/bold]"
              + (f"  (strategy override: {result['strategy']})" if result.get("strategy") else ""))
    if result.get("description"):
        out.print(f"[italic]{result['description'].strip()}[/italic]")
    events = [ev for ev in result["events"] if show_events or _worth_showing(ev)]
    shown = events if show_events else events[:_TIMELINE_LIMIT]
    for ev in shown:
        out.print(f"  [dim]{ev['t']:>9.3f}s[/dim]  {describe_event(ev)}", markup=True, soft_wrap=True)
    if len(shown) < len(events):
        out.print(f"  [dim]... {len(events) - len(shown)} more events (--events shows all, --json everything)[/dim]")
    out.print()
    table = Table(title=f"Summary after {result['endedAt']:g} s of virtual time; "
                        f"{result['apiWrites']} API writes by controllers")
    quorum = any(fig.get("quorumLossSeconds") is not None for fig in result["summary"].values())
    columns = ["StatefulSet", "completed", "rollout s", "max unavailable", "unavailable pod-s"]
    if quorum:
        columns += ["quorum loss s", "elections"]
    columns += ["pods created", "pods deleted", "forced"]
    for col in columns:
        table.add_column(col, justify="left" if col == "StatefulSet" else "right")
    for name, fig in result["summary"].items():
        row = [
            name,
            "yes" if fig["completed"] else "[red]no[/red]",
            "-" if fig["rolloutSeconds"] is None else f"{fig['rolloutSeconds']:g}",
            str(fig["maxUnavailableObserved"]),
            f"{fig['unavailablePodSeconds']:g}",
        ]
        if quorum:
            row += [_figure(fig.get("quorumLossSeconds")), _figure(fig.get("leaderElections"))]
        row += [str(fig["podCreations"]), str(fig["podDeletions"]), str(fig["forcedReplacements"])]
        table.add_row(*row)
    out.print(table)
    for line in waiting_lines(result):
        out.print(line)
    for failure in expect_failures or ():
        out.print(f"[red]expect failed:[/red] {failure}")
