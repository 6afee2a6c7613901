"""Argo Rollouts' assessment rules (``analysis/analysis.go``, ``utils/evaluate/evaluate.go``), over rollwise's
AnalysisRun status: a measurement's phase from the conditions, a metric's phase from its counts, the run's phase
from its metrics', and the run's message.

- A measurement (``EvaluateResult``): neither condition set → Successful; only ``successCondition`` → Failed when
  it is false; only ``failureCondition`` → Successful when it is false; both → Failed when the failure condition
  holds, Successful when only the success condition does, Inconclusive when neither does. A condition that cannot
  be evaluated makes it an Error.
- A metric (``assessMetricStatus``): failed > failureLimit → Failed; inconclusive > inconclusiveLimit →
  Inconclusive; consecutiveError > consecutiveErrorLimit → Error; count reached → Successful; a terminating run
  ends it Successful (with what it has); else Pending (nothing measured) or Running.
- The run (``asssessRunStatus``): Running while a metric is not completed; then the worst completed phase, in
  Argo's order Successful < Inconclusive < Error < Failed (``analysisutil.IsWorse``).

Pure: no I/O, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.analysis import (
    COMPLETED_PHASES,
    ERROR,
    FAILED,
    INCONCLUSIVE,
    PENDING,
    RUNNING,
    SUCCESSFUL,
    Measured,
    Metric,
)
from rollwise.api.analysis_cel import evaluate_condition

__all__ = ["WORSE_ORDER", "measurement_phase", "metric_phase", "run_message", "run_phase", "shown_value"]

WORSE_ORDER = (PENDING, RUNNING, SUCCESSFUL, INCONCLUSIVE, ERROR, FAILED)
"""Argo's ``analysisStatusOrder``: a later phase is worse."""
_VERBS = {FAILED: "failed", ERROR: "errored", INCONCLUSIVE: "was inconclusive"}


def shown_value(value: Any) -> str:
    """A measured value as the status keeps it (Argo's ``Measurement.value`` is a string): a string as it is,
    anything else as JSON (``0.12``, ``[0.97]``, ``true``)."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def measurement_phase(metric: Metric, measured: Measured) -> tuple[str, str]:
    """(phase, message) of one measurement. The message says why it is not Successful: the provider's error, the
    condition that failed to evaluate, or the value and the condition it matched (or missed)."""
    if measured.error is not None:
        return ERROR, measured.error
    success, failure = metric.success_condition, metric.failure_condition
    truths: dict[str, bool] = {}
    for name, expression in (("successCondition", success), ("failureCondition", failure)):
        if expression is None:
            continue
        truth, why = evaluate_condition(expression, measured.value)
        if truth is None:
            return ERROR, why or f"{name} could not be evaluated"
        truths[name] = truth
    shown = shown_value(measured.value)
    if failure is not None and truths["failureCondition"]:
        return FAILED, f'result {shown} matches failureCondition "{failure}"'
    if success is not None and failure is None and not truths["successCondition"]:
        return FAILED, f'result {shown} does not match successCondition "{success}"'
    if success is not None and failure is not None and not truths["successCondition"]:
        return INCONCLUSIVE, (f'result {shown} matches neither successCondition "{success}" nor failureCondition '
                              f'"{failure}"')
    return SUCCESSFUL, ""


def metric_phase(metric: Metric, result: Mapping[str, Any], *, terminating: bool) -> str:
    """The phase of one metric's result (Argo's ``assessMetricStatus``)."""
    phase = result.get("phase")
    if phase in COMPLETED_PHASES:
        return str(phase)
    measurements = result.get("measurements") or []
    if not measurements:
        return SUCCESSFUL if terminating else PENDING
    if int(result.get("failed", 0)) > metric.failure_limit:
        return FAILED
    if int(result.get("inconclusive", 0)) > metric.inconclusive_limit:
        return INCONCLUSIVE
    if int(result.get("consecutiveError", 0)) > metric.consecutive_error_limit:
        return ERROR
    if int(result.get("count", 0)) >= metric.count:
        return SUCCESSFUL
    return SUCCESSFUL if terminating else RUNNING


def run_phase(metric_phases: list[str]) -> str:
    """The run's phase from its metrics' (a metric not measured yet counts as Pending): Running until every one
    has completed, then the worst."""
    if not metric_phases or any(p not in COMPLETED_PHASES for p in metric_phases):
        return RUNNING
    return max(metric_phases, key=WORSE_ORDER.index)


def run_message(results: Sequence[Mapping[str, Any]], phase: str) -> str | None:
    """When the run is Failed, Error or Inconclusive: the first metric at that phase, and why (its last
    measurement's message, which names the value: ``metric error-rate failed: result 0.12 matches
    failureCondition "result > 0.05"``)."""
    if phase not in _VERBS:
        return None
    for result in results:
        if result.get("phase") == phase:
            return f"metric {result.get('name')} {_VERBS[phase]}: {result.get('message') or phase}"
    return None
