"""Presentation only: readable summaries with rich, and invalid-input messages on stderr."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rollwise.api.errors import InvalidObject

__all__ = ["collapse_repeats", "console", "describe_event", "figure", "print_invalid", "render_result"]

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
    if kind == "PodUpdatedInPlace":
        return (f"{pod} updated in place to revision {ev.get('revision')} (from {ev.get('fromRevision')}, "
                f"by {ev.get('by')})")
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


def figure(value: Any) -> str:
    """A figure as a person writes it: ``2592000``, ``41.5``, ``-`` for none; never ``2.592e+06``."""
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:.3f}".rstrip("0").rstrip(".")
        return "0" if text == "-0" else text
    return str(value)


def console(width: int = 200) -> Console:
    """A console for stdout: the terminal's width, or ``width`` when piped, wide enough for every table's columns
    (rich would otherwise assume 80 and clip them)."""
    return Console(highlight=False, width=None if sys.stdout.isatty() else width)


def collapse_repeats(lines: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """Runs of the same line (a pod in back-off, minute after minute) as the first one and a count."""
    out: list[tuple[float, str]] = []
    i = 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and lines[j + 1][1] == lines[i][1]:
            j += 1
        out.append(lines[i])
        if j > i:
            out.append((lines[j][0], f"... repeated {j - i} more time{'s' if j - i != 1 else ''}, the last at "
                                     f"t={figure(lines[j][0])} s"))
        i = j + 1
    return out


def _why_it_went_on(result: Mapping[str, Any], limit_seconds: float | None) -> str | None:
    """A run that ended at its time limit long after its last step: say why (something was always scheduled)."""
    steps = [ev["t"] for ev in result["events"] if ev["type"] == "Step"]
    last_step = max(steps, default=0.0)
    if limit_seconds is None or result["endedAt"] < limit_seconds or not steps:
        return None
    restarting = sorted({ev.get("pod", "") for ev in result["events"]
                         if ev["type"] == "ContainerWaiting" and ev["t"] > last_step
                         and ev.get("reason") in ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull")})
    cause = (f"{', '.join(restarting)} kept restarting in back-off, so the kubelet always had a restart scheduled"
             if restarting else "something was always scheduled (timers, back-offs or progress deadlines)")
    return (f"The run went on after its last step (t={figure(last_step)} s) to limitSeconds "
            f"({figure(limit_seconds)} s): {cause}. Set limitSeconds, or end with a waitFor, to stop sooner.")


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
                  out: Console | None = None, limit_seconds: float | None = None) -> None:
    out = out or console()
    out.print(f"[bold]{escape(str(result['scenario']))}[/bold]"
              + (f"  (strategy override: {escape(str(result['strategy']))})" if result.get("strategy") else ""))
    if result.get("description"):
        out.print(f"[italic]{escape(result['description'].strip())}[/italic]")
    events = [ev for ev in result["events"] if show_events or _worth_showing(ev)]
    lines = [(ev["t"], describe_event(ev)) for ev in events]
    if not show_events:
        lines = collapse_repeats(lines)
    shown = lines if show_events else lines[:_TIMELINE_LIMIT]
    for t, text in shown:
        out.print(f"  [dim]{t:>9.3f}s[/dim]  {escape(text)}", soft_wrap=True)
    if len(shown) < len(lines):
        out.print(f"  [dim]... {len(lines) - len(shown)} more lines (--events shows every event, --json everything)"
                  "[/dim]")
    reason = _why_it_went_on(result, limit_seconds)
    if reason:
        out.print(escape(reason))
    out.print()
    table = Table(title=f"Summary after {figure(result['endedAt'])} s of virtual time; "
                        f"{result['apiWrites']} API writes by controllers")
    quorum = any(fig.get("quorumLossSeconds") is not None for fig in result["summary"].values())
    columns = ["StatefulSet", "completed", "rollout s", "max unavailable", "unavailable pod-s"]
    if quorum:
        columns += ["quorum loss s", "leaderless s", "elections"]
    columns += ["pods created", "pods deleted", "forced"]
    in_place = any(fig.get("podInPlaceUpdates") for fig in result["summary"].values())
    if in_place:
        columns.append("in place")
    for col in columns:
        table.add_column(col, justify="left" if col == "StatefulSet" else "right")
    for name, fig in result["summary"].items():
        row = [
            escape(name),
            "yes" if fig["completed"] else "[red]no[/red]",
            figure(fig["rolloutSeconds"]),
            str(fig["maxUnavailableObserved"]),
            figure(fig["unavailablePodSeconds"]),
        ]
        if quorum:
            row += [figure(fig.get("quorumLossSeconds")), figure(fig.get("leaderlessSeconds")),
                    figure(fig.get("leaderElections"))]
        row += [str(fig["podCreations"]), str(fig["podDeletions"]), str(fig["forcedReplacements"])]
        if in_place:
            row.append(str(fig.get("podInPlaceUpdates", 0)))
        table.add_row(*row)
    out.print(table)
    for line in waiting_lines(result):
        out.print(escape(line))
    for failure in expect_failures or ():
        out.print(f"[red]expect failed:[/red] {escape(failure)}")
