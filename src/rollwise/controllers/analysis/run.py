"""The AnalysisRun controller's decisions (Argo Rollouts' ``analysis/analysis.go``, ``reconcileAnalysisRun``): which
metrics are due at ``now``, a measurement folded into the status, the run's phase and message, and when time alone
changes something (the requeue).

A driver reconciles a run so: ``decide`` → write ``spec`` if it says so (the first reconcile resolves the templates
into ``spec.metrics``; a template edited later does not change a running analysis) → measure each metric of
``measure`` (the providers, ``runtime/analysis_providers``) and fold each in with ``record`` → write the status if
it differs from the stored one → requeue after ``next_reconcile``. A reconcile of an unchanged world writes nothing:
the status carries only moments (whole seconds), never an elapsed time.

Where Argo ends the other metrics of a run one reconcile after one of them fails (``IsTerminating`` reads the last
status), this reaches the same status in the reconcile that saw the failure: nothing is measured in between.

Times are float seconds (the wire codec writes them as RFC 3339, cluster/wire.py), floored to whole seconds as the
API server keeps them. Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.analysis import (
    COMPLETED_PHASES,
    ERROR,
    ERROR_RETRY_SECONDS,
    FAILED,
    INCONCLUSIVE,
    MEASUREMENT_HISTORY_LIMIT,
    PENDING,
    RUNNING,
    SUCCESSFUL,
    Measured,
    Metric,
    MissingArgument,
    metric_of,
    resolved_args,
    substituted_provider,
)
from rollwise.api.analysis_validation import check_metrics
from rollwise.api.meta import Obj, name_of
from rollwise.controllers.analysis.assess import (
    measurement_phase,
    metric_phase,
    run_message,
    run_phase,
    shown_value,
)

__all__ = ["AnalysisPlan", "Task", "assessed", "completion_events", "decide", "metrics_of", "next_reconcile",
           "record", "resolve"]

_STOPPING = (FAILED, ERROR, INCONCLUSIVE)
"""A metric at one of these ends the run's other metrics (Argo's ``IsTerminating``)."""


@dataclass(frozen=True, slots=True)
class Task:
    """One measurement to take now: the metric, and its provider block with the run's arguments in it."""

    metric: str
    provider: Mapping[str, Any]
    """``{key: block}``: exactly one provider key (``api.analysis.PROVIDERS``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalysisPlan:
    spec: dict[str, Any] | None = None
    """The run's new spec (templates resolved into metrics, arguments merged), or None."""
    status: dict[str, Any] | None = None
    """The status to write before measuring (a run that cannot start: Error), or None: as stored."""
    measure: tuple[Task, ...] = ()
    events: tuple[tuple[str, str, str], ...] = field(default=())
    """(type, reason, message) of events to emit: the run completed."""


def _seconds(now: float) -> float:
    return float(math.floor(now))


def _status(run: Mapping[str, Any]) -> dict[str, Any]:
    status = run.get("status")
    return dict(status) if isinstance(status, Mapping) else {}


def metrics_of(run: Mapping[str, Any]) -> list[Metric]:
    """The metrics of a resolved run's spec."""
    return [metric_of(m) for m in (run.get("spec") or {}).get("metrics") or () if isinstance(m, Mapping)]


def resolve(run: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]]) -> tuple[dict[str, Any] | None,
                                                                                         str | None]:
    """(the run's spec with its templates' metrics and arguments, None), or (None, why it cannot run): a template
    missing from the run's namespace (Argo: ``analysistemplate "NAME" not found``), metrics that are not valid
    (Argo: ``analysis spec invalid``), or an argument without a value."""
    spec = dict(run.get("spec") or {})
    metrics = list(spec.get("metrics") or ())
    declared: list[Mapping[str, Any]] = []
    for ref in spec.get("templates") or ():
        name = str(ref.get("templateName", "")) if isinstance(ref, Mapping) else ""
        template = templates.get(name)
        if template is None:
            return None, f'AnalysisTemplate "{name}" not found in the run\'s namespace'
        tspec = template.get("spec") or {}
        metrics += list(tspec.get("metrics") or ())
        declared += list(tspec.get("args") or ())
    errors = check_metrics(metrics, "spec.metrics")
    if errors:
        return None, "analysis spec invalid: " + "; ".join(str(e) for e in errors)
    args = resolved_args(declared, spec.get("args"))
    try:
        for metric in metrics:
            substituted_provider(metric_of(metric), args)
    except MissingArgument as err:
        return None, f"unable to resolve metric arguments: {err}"
    spec["metrics"] = metrics
    spec["args"] = [{"name": k} if v is None else {"name": k, "value": v} for k, v in args.items()]
    return spec, None


def _result(status: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    for result in status.get("metricResults") or ():
        if result.get("name") == name:
            return dict(result)
    return None


def _terminating(run: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    return bool((run.get("spec") or {}).get("terminate")) or any(
        r.get("phase") in _STOPPING for r in status.get("metricResults") or ())


def _due(metric: Metric, result: Mapping[str, Any] | None, started: float, now: float) -> bool:
    """Argo's ``generateMetricTasks`` for one metric of a run that is not terminating."""
    measurements = (result or {}).get("measurements") or []
    if result is None or not measurements:
        return now >= started + metric.initial_delay
    if result.get("phase") in COMPLETED_PHASES or int(result.get("count", 0)) >= metric.count:
        return False
    interval = _interval(metric, measurements[-1])
    return interval is not None and now >= float(measurements[-1].get("finishedAt", 0)) + interval


def _interval(metric: Metric, last: Mapping[str, Any]) -> int | None:
    if metric.interval is not None:
        return metric.interval
    return ERROR_RETRY_SECONDS if last.get("phase") == ERROR else None


def assessed(run: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """``status`` with each metric's phase and message, the run's phase and message brought up to date."""
    out = dict(status)
    metrics = metrics_of(run)
    results = [dict(r) for r in out.get("metricResults") or ()]
    by_name = {r.get("name"): r for r in results}
    terminating = bool((run.get("spec") or {}).get("terminate"))
    for _ in range(2):  # a metric that stops the run ends the others in the same reconcile (module docstring)
        for metric in metrics:
            result = by_name.get(metric.name)
            if result is None:
                continue
            phase = metric_phase(metric, result, terminating=terminating)
            if phase != result.get("phase"):
                result["phase"] = phase
                last = (result.get("measurements") or [{}])[-1]
                if last.get("message"):
                    result["message"] = last["message"]
        if terminating or not any(r.get("phase") in _STOPPING for r in results):
            break
        terminating = True
    phases = [by_name[m.name]["phase"] if m.name in by_name else (SUCCESSFUL if terminating else PENDING)
              for m in metrics]
    if results:
        out["metricResults"] = results
    out["phase"] = run_phase(phases)
    message = run_message(results, out["phase"])
    if message is None:
        out.pop("message", None)
    else:
        out["message"] = message
    return out


def decide(run: Obj, templates: Mapping[str, Mapping[str, Any]], now: float) -> AnalysisPlan:
    """What to do for ``run`` at ``now``; ``templates`` are the AnalysisTemplates of its namespace, by name."""
    status = _status(run)
    if status.get("phase") in COMPLETED_PHASES:
        return AnalysisPlan()
    now = _seconds(now)
    spec = run.get("spec") or {}
    if not spec.get("metrics"):
        resolved, why = resolve(run, templates)
        if resolved is not None:
            return AnalysisPlan(spec=resolved)
    else:
        why = None if "startedAt" in status else resolve({**run, "spec": {**spec, "templates": []}}, {})[1]
    if why is not None:
        failed = {**status, "phase": ERROR, "message": why, "startedAt": status.get("startedAt", now)}
        return AnalysisPlan(status=failed, events=completion_events(run, status, failed))
    new = assessed(run, {**status, "startedAt": status.get("startedAt", now)})
    tasks: list[Task] = []
    if not _terminating(run, new):
        args = resolved_args(None, spec.get("args"))
        for metric in metrics_of(run):
            if _due(metric, _result(new, metric.name), float(new["startedAt"]), now):
                tasks.append(Task(metric.name, substituted_provider(metric, args)))
    events = completion_events(run, status, new)
    return AnalysisPlan(status=None if new == status else new, measure=tuple(tasks), events=events)


def completion_events(run: Mapping[str, Any], old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[
        tuple[str, str, str], ...]:
    """Argo's event when the run completes (``recordAnalysisRunCompletionEvent``: reason ``AnalysisRun<Phase>``,
    Warning for Failed and Error)."""
    phase = new.get("phase")
    if phase == old.get("phase") or phase not in COMPLETED_PHASES:
        return ()
    text = f"analysis {name_of(run)} completed {phase}" + (f": {new['message']}" if new.get("message") else "")
    return (("Warning" if phase in (FAILED, ERROR) else "Normal", f"AnalysisRun{phase}", text),)


def record(run: Obj, metric_name: str, measured: Measured, now: float, *,
           started: float | None = None) -> dict[str, Any]:
    """The run's status with one measurement of ``metric_name`` folded in (Argo's ``runMeasurements``: the counts,
    the last 10 measurements kept) and everything assessed again. ``started``: when the measurement began
    (default ``now``)."""
    now = _seconds(now)
    metric = next(m for m in metrics_of(run) if m.name == metric_name)
    status = _status(run)
    status.setdefault("startedAt", now)
    phase, message = measurement_phase(metric, measured)
    measurement: dict[str, Any] = {"phase": phase, "startedAt": _seconds(started if started is not None else now),
                                   "finishedAt": now}
    if measured.error is None:
        measurement["value"] = shown_value(measured.value)
    if message:
        measurement["message"] = message
    result = _result(status, metric_name) or {"name": metric_name, "phase": RUNNING, "count": 0, "successful": 0,
                                              "failed": 0, "inconclusive": 0, "error": 0, "consecutiveError": 0}
    counter = {SUCCESSFUL: "successful", FAILED: "failed", INCONCLUSIVE: "inconclusive", ERROR: "error"}[phase]
    result[counter] = int(result.get(counter, 0)) + 1
    if phase == ERROR:
        result["consecutiveError"] = int(result.get("consecutiveError", 0)) + 1
    else:
        result["count"] = int(result.get("count", 0)) + 1
        result["consecutiveError"] = 0
    result["measurements"] = [*(result.get("measurements") or ()), measurement][-MEASUREMENT_HISTORY_LIMIT:]
    if result.get("phase") not in COMPLETED_PHASES:
        result["phase"] = RUNNING
    results = [r for r in status.get("metricResults") or () if r.get("name") != metric_name]
    order = [m.name for m in metrics_of(run)]
    status["metricResults"] = sorted([*results, result], key=lambda r: order.index(r["name"])
                                     if r.get("name") in order else len(order))
    return assessed(run, status)


def next_reconcile(run: Obj, now: float) -> float | None:
    """Seconds from ``now`` until time alone makes a metric due (Argo's ``calculateNextReconcileTime``: the
    earliest of the initial delays and of the last measurements plus their interval), None when nothing waits on
    time (the run completed, or every metric is done)."""
    status = _status(run)
    if status.get("phase") in COMPLETED_PHASES or not (run.get("spec") or {}).get("metrics") \
            or _terminating(run, status):
        return None
    started = float(status.get("startedAt", now))
    times: list[float] = []
    for metric in metrics_of(run):
        result = _result(status, metric.name)
        measurements = (result or {}).get("measurements") or []
        if not measurements:
            times.append(started + metric.initial_delay)
            continue
        if result is None or result.get("phase") in COMPLETED_PHASES or int(result.get("count", 0)) >= metric.count:
            continue
        interval = _interval(metric, measurements[-1])
        if interval is not None:
            times.append(float(measurements[-1].get("finishedAt", now)) + interval)
    return max(0.0, min(times) - _seconds(now)) if times else None
