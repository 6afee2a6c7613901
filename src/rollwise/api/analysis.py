"""The AnalysisTemplate and AnalysisRun kinds (``apps.rollwise.dev/v1alpha1``): their names, defaults and reading.

Names, fields and defaults are Argo Rollouts' (``pkg/apis/rollouts/v1alpha1/analysis_types.go``, docs
``features/analysis``), with one difference: ``successCondition`` and ``failureCondition`` are CEL over ``result``
(as a CRD's rules are), not Argo's expr language. A metric measures once unless it has an ``interval``; ``count``
defaults to 1 (Argo measures an interval metric without a count until the run is stopped, which only its
background analysis uses: a step's analysis must end).

Validation is ``analysis_validation.py``, CEL ``analysis_cel.py``, the pure controller ``controllers/analysis/``.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.meta import PROJECT_GROUP
from rollwise.api.steps import parse_duration

__all__ = [
    "ANALYSIS_API_VERSION",
    "ANALYSIS_GROUP",
    "ANALYSIS_KINDS",
    "ANALYSIS_RUN",
    "ANALYSIS_TEMPLATE",
    "COMPLETED_PHASES",
    "DEFAULT_CONSECUTIVE_ERROR_LIMIT",
    "ERROR",
    "ERROR_RETRY_SECONDS",
    "FAILED",
    "INCONCLUSIVE",
    "MEASUREMENT_HISTORY_LIMIT",
    "PENDING",
    "PHASES",
    "PROVIDERS",
    "RUNNING",
    "SUCCESSFUL",
    "Measured",
    "Metric",
    "MissingArgument",
    "argument_names",
    "metric_of",
    "resolved_args",
    "substitute_args",
    "substituted_provider",
]

ANALYSIS_GROUP = PROJECT_GROUP
ANALYSIS_API_VERSION = f"{ANALYSIS_GROUP}/v1alpha1"
ANALYSIS_TEMPLATE = "AnalysisTemplate"
ANALYSIS_RUN = "AnalysisRun"
ANALYSIS_KINDS = (ANALYSIS_TEMPLATE, ANALYSIS_RUN)

PENDING, RUNNING, SUCCESSFUL, FAILED, ERROR, INCONCLUSIVE = (
    "Pending", "Running", "Successful", "Failed", "Error", "Inconclusive")
PHASES = (PENDING, RUNNING, SUCCESSFUL, FAILED, ERROR, INCONCLUSIVE)
COMPLETED_PHASES = (SUCCESSFUL, FAILED, ERROR, INCONCLUSIVE)
"""Argo's ``AnalysisPhase.Completed()``."""

PROVIDERS = ("web", "prometheus")
"""The provider keys a metric may have, exactly one (the measuring code: ``runtime/analysis_providers``)."""
DEFAULT_CONSECUTIVE_ERROR_LIMIT = 4
ERROR_RETRY_SECONDS = 10
"""Argo's ``DefaultErrorRetryInterval``: when a metric without an interval errs, it is measured again after this."""
MEASUREMENT_HISTORY_LIMIT = 10
"""Argo's ``DefaultMeasurementHistoryLimit``: the measurements kept per metric (the counts keep the rest)."""

_ARG = re.compile(r"\{\{\s*args\.([-._a-zA-Z0-9]+)\s*\}\}")


@dataclass(frozen=True, slots=True)
class Measured:
    """What a provider measured: a value as JSON gives it (a number, string, list or mapping), or why it could
    not (``error``: the measurement is an Error, Argo's provider error)."""

    value: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Metric:
    """One metric read from a valid spec, defaults applied."""

    name: str
    interval: int | None
    """Seconds between measurements; None: measured once (a count above 1 needs an interval)."""
    count: int
    failure_limit: int
    inconclusive_limit: int
    consecutive_error_limit: int
    initial_delay: int
    success_condition: str | None
    failure_condition: str | None
    provider: str
    raw: Mapping[str, Any] = field(repr=False)
    """The metric as written (what a provider reads, after ``substituted_provider``)."""


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def metric_of(raw: Mapping[str, Any]) -> Metric:
    """The metric of a valid ``metrics[]`` item."""
    provider = raw.get("provider") or {}
    return Metric(
        name=str(raw.get("name", "")),
        interval=parse_duration(raw["interval"]) if raw.get("interval") is not None else None,
        count=_int(raw.get("count"), 1),
        failure_limit=_int(raw.get("failureLimit"), 0),
        inconclusive_limit=_int(raw.get("inconclusiveLimit"), 0),
        consecutive_error_limit=_int(raw.get("consecutiveErrorLimit"), DEFAULT_CONSECUTIVE_ERROR_LIMIT),
        initial_delay=parse_duration(raw.get("initialDelay")) or 0,
        success_condition=raw.get("successCondition") or None,
        failure_condition=raw.get("failureCondition") or None,
        provider=next((key for key in PROVIDERS if key in provider), ""),
        raw=raw,
    )


class MissingArgument(ValueError):
    """An ``{{args.NAME}}`` with no value (Argo: "unable to resolve metric arguments")."""


def resolved_args(declared: Sequence[Mapping[str, Any]] | None,
                  given: Sequence[Mapping[str, Any]] | None) -> dict[str, str | None]:
    """The value of each argument: the run's (``given``) over the template's default (``declared``); None when
    declared without a value and not given (an error only if a metric names it)."""
    out: dict[str, str | None] = {}
    for arg in declared or ():
        out[str(arg.get("name"))] = None if arg.get("value") is None else str(arg["value"])
    for arg in given or ():
        out[str(arg.get("name"))] = None if arg.get("value") is None else str(arg["value"])
    return out


def substitute_args(text: str, args: Mapping[str, str | None]) -> str:
    """``text`` with each ``{{args.NAME}}`` replaced by the argument's value (Argo's ``templateutil.ResolveArgs``).
    Raises MissingArgument naming the first argument without a value."""
    def value(match: re.Match[str]) -> str:
        got = args.get(match[1])
        if got is None:
            raise MissingArgument(f"argument {match[1]!r} has no value (spec.args)")
        return got
    return _ARG.sub(value, text)


def argument_names(value: Any) -> set[str]:
    """The arguments every ``{{args.NAME}}`` in the strings of ``value`` names."""
    if isinstance(value, str):
        return set(_ARG.findall(value))
    if isinstance(value, Mapping):
        return set().union(*(argument_names(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(argument_names(v) for v in value))
    return set()


def substituted_provider(metric: Metric, args: Mapping[str, str | None]) -> dict[str, Any]:
    """The metric's provider block with the arguments in every string (url, query, headers, ...), as Argo
    substitutes over the whole metric before measuring. Raises MissingArgument."""
    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return substitute_args(value, args)
        if isinstance(value, Mapping):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value
    provider = metric.raw.get("provider") or {}
    return {metric.provider: walk(provider.get(metric.provider) or {})}
