"""Where a canary stands, in words every face shows alike (``rollwise get``, ``get --watch``, ``status``, the
dashboard): the step and what it waits on (``step 2/4 analysis web-7cf995dbdb-2 Running``, a pause's end), the
stable revision, and an abort with its reason. Read from the set's spec and status only (the controller writes
what it decided there: controllers/statefulset/steps.py, analysis.py, abort.py). Pure: no I/O, no clock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.abort import is_aborted
from rollwise.api.meta import format_time
from rollwise.api.steps import Step, set_steps
from rollwise.projection.model import CanaryRow

__all__ = ["canary_of"]


def canary_of(sts: Mapping[str, Any]) -> CanaryRow | None:
    """The canary row of a set with ``rollingUpdate.steps``; None without steps."""
    steps = set_steps(sts)
    if not steps:
        return None
    status = sts.get("status") or {}
    stable = str(status.get("stableRevision") or status.get("currentRevision") or "")
    run = status.get("currentStepAnalysisRun")
    run = run if isinstance(run, Mapping) else None
    if is_aborted(status):
        where = f"aborted at analysis {_run(run)}" if run is not None else "aborted"
        return CanaryRow(step=where, stable=stable, abort=str(status.get("abortMessage") or ""))
    return CanaryRow(step=_where(steps, status, run), stable=stable, abort="")


def _where(steps: tuple[Step, ...], status: Mapping[str, Any], run: Mapping[str, Any] | None) -> str:
    count = len(steps)
    if not status.get("updateRevision") or status.get("currentRevision") == status.get("updateRevision"):
        return f"{count} step{'' if count == 1 else 's'}; no rollout under way"
    if status.get("promoteFull") is True:
        return "promoted --full: every step left is skipped"
    index = status.get("currentStepIndex")
    index = index if isinstance(index, int) and not isinstance(index, bool) and index >= 0 else 0
    if index >= count:
        return f"past the last of {count} steps: the rest of the pods follow"
    step = steps[index]
    return f"step {index + 1}/{count} {_step(step, status, run)}"


def _step(step: Step, status: Mapping[str, Any], run: Mapping[str, Any] | None) -> str:
    if step.kind == "analysis":
        return f"analysis {_run(run)}" if run is not None else "analysis (its run is being created)"
    start = status.get("pauseStartTime")
    if step.kind == "pause" and step.duration is not None and isinstance(start, (int, float)):
        return f"pause {step.duration}s, until {format_time(float(start) + step.duration)}"
    return step.describe()


def _run(run: Mapping[str, Any]) -> str:
    said = run.get("message")
    return f"{run.get('name', '')} {run.get('phase', '')}" + (f": {said}" if said else "")
