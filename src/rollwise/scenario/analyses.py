"""A scenario's recorded analyses (``analyses:``): the values each metric of an AnalysisTemplate measures in the
simulator, in place of its provider (the web or Prometheus call a cluster makes), so a canary's analysis step plays
out in virtual time and the same every run.

    analyses:
      error-rate:                        # an AnalysisTemplate of objects:, by name
        metrics:
          error-rate:                    # one of its metrics, by name
            values: [0.01, 0.02]         # one per measurement, in order; the last one repeats
            images:                      # for a run of a revision whose first container runs this image
              "app:v2-bad": [0.12]
            # a value {error: "connection refused"} is a measurement that failed (an Error)

Which image a run measures is its revision's (the run's ``rollwise.dev/revision`` label): so one scenario replays
a good image and a bad one. Pure: parsing and lookup only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.numbers import describe_type

__all__ = ["MAX_VALUES", "Recorded", "RecordedAnalyses", "parse_analyses"]

MAX_VALUES = 1000
"""Far above any analysis; bounds a scenario's size."""
_METRIC_KEYS = ("values", "images")


@dataclass(frozen=True, slots=True)
class Recorded:
    """One measurement as recorded: a value as JSON gives it, or the error a provider would have returned."""

    value: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedMetric:
    values: tuple[Recorded, ...]
    images: Mapping[str, tuple[Recorded, ...]] = field(default_factory=dict)

    def at(self, image: str, index: int) -> Recorded:
        """The ``index``-th measurement (from 0) of a run of a revision running ``image``; the last one repeats."""
        values = self.images.get(image) or self.values
        return values[min(index, len(values) - 1)]


@dataclass(frozen=True, slots=True)
class RecordedAnalyses:
    """Template name → metric name → what it measures."""

    templates: Mapping[str, Mapping[str, RecordedMetric]] = field(default_factory=dict)

    def metric(self, template_names: Sequence[str], metric: str) -> RecordedMetric | None:
        """The recording of ``metric`` in the first of the run's templates that has one."""
        for name in template_names:
            found = self.templates.get(name, {}).get(metric)
            if found is not None:
                return found
        return None

    def __bool__(self) -> bool:
        return bool(self.templates)


def parse_analyses(raw: Any, errors: list[FieldError], path: str = "analyses") -> RecordedAnalyses:
    """Every problem appended to ``errors`` with its field path."""
    if raw is None:
        return RecordedAnalyses()
    if not isinstance(raw, Mapping):
        errors.append(FieldError(path=path, value=describe_type(raw),
                                 rule="must be a mapping of AnalysisTemplate name to {metrics: {NAME: {values}}}"))
        return RecordedAnalyses()
    templates: dict[str, dict[str, RecordedMetric]] = {}
    for name, body in raw.items():
        at = f"{path}.{name}"
        if not isinstance(body, Mapping) or set(body) != {"metrics"} or not isinstance(body["metrics"], Mapping) \
                or not body["metrics"]:
            errors.append(FieldError(path=at, value=describe_type(body),
                                     rule="must be {metrics: {NAME: {values: [...]}}} with at least one metric"))
            continue
        metrics = {}
        for metric, spec in body["metrics"].items():
            parsed = _metric(spec, f"{at}.metrics.{metric}", errors)
            if parsed is not None:
                metrics[str(metric)] = parsed
        templates[str(name)] = metrics
    return RecordedAnalyses(templates)


def _metric(spec: Any, path: str, errors: list[FieldError]) -> RecordedMetric | None:
    if not isinstance(spec, Mapping):
        errors.append(FieldError(path=path, value=describe_type(spec), rule="must be a mapping with values"))
        return None
    unknown = [k for k in spec if k not in _METRIC_KEYS]
    for key in unknown:
        errors.append(FieldError(path=f"{path}.{key}", kind="Unsupported value", value=key,
                                 rule="unknown field; supported: " + ", ".join(_METRIC_KEYS)))
    values = _values(spec.get("values"), f"{path}.values", errors)
    images: dict[str, tuple[Recorded, ...]] = {}
    raw_images = spec.get("images")
    if raw_images is not None and not isinstance(raw_images, Mapping):
        errors.append(FieldError(path=f"{path}.images", value=describe_type(raw_images),
                                 rule="must be a mapping of image to a list of values"))
    elif raw_images is not None:
        for image, listed in raw_images.items():
            parsed = _values(listed, f"{path}.images[{image}]", errors)
            if parsed is not None:
                images[str(image)] = parsed
    if values is None or unknown:
        return None
    return RecordedMetric(values=values, images=images)


def _values(raw: Any, path: str, errors: list[FieldError]) -> tuple[Recorded, ...] | None:
    if not isinstance(raw, list) or not raw:
        errors.append(FieldError(path=path, kind="Required value" if raw is None else "Invalid value",
                                 value=None if raw is None else describe_type(raw),
                                 rule="a non-empty list of measured values (the last one repeats)"))
        return None
    if len(raw) > MAX_VALUES:
        errors.append(FieldError(path=path, kind="Too many", rule=f"must have at most {MAX_VALUES} values"))
        return None
    out = []
    for i, value in enumerate(raw):
        if isinstance(value, Mapping) and set(value) == {"error"}:
            if not isinstance(value["error"], str) or not value["error"]:
                errors.append(FieldError(path=f"{path}[{i}].error", value=value["error"],
                                         rule="must be the error message a provider would return"))
                continue
            out.append(Recorded(error=value["error"]))
        elif value is None:
            errors.append(FieldError(path=f"{path}[{i}]", kind="Required value",
                                     rule="a value (number, string, list or mapping) or {error: MESSAGE}"))
        else:
            out.append(Recorded(value=value))
    return tuple(out) if len(out) == len(raw) else None
