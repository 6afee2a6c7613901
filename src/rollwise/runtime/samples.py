"""The controllers' metrics as a process holds them: gauges set, counters added to, one histogram.

Controllers report samples in their plans (they are pure); this registry keeps the values, as a Prometheus client
would, and ``export()`` gives the ``metrics`` key of the result document: every metric by name, one entry per
label set. ``statefulset_update_duration_seconds`` (seed 003) is observed here, from status changes: a rollout
starts when ``status.updateRevision`` moves and ends when ``currentRevision`` catches up. So is
``statefulset_rollout_failed{namespace, statefulset, reason}``: 1 while the set's ``Progressing`` condition holds a
failing reason (the one table, ``api/reasons.py``), 0 once it no longer does; a set that never failed has no series.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.api.reasons import failing_reason
from rollwise.api.strategies import ROLLING_UPDATE
from rollwise.controllers.plan import MetricSample

__all__ = ["DURATION_BUCKETS", "MetricsRegistry"]

ROLLOUT_FAILED = "statefulset_rollout_failed"
DURATION_BUCKETS = (10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, float("inf"))
Labels = tuple[tuple[str, str], ...]


@dataclass(slots=True)
class _Histogram:
    count: int = 0
    total: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * len(DURATION_BUCKETS))

    def observe(self, value: float) -> None:
        self.count += 1
        self.total += value
        for i, bound in enumerate(DURATION_BUCKETS):
            if value <= bound:
                self.buckets[i] += 1


def _failure_labels(key: tuple[str, str], reason: str) -> Labels:
    return (("namespace", key[0]), ("reason", reason), ("statefulset", key[1]))


@dataclass(slots=True)
class MetricsRegistry:
    gauges: dict[tuple[str, Labels], float] = field(default_factory=dict)
    counters: dict[tuple[str, Labels], float] = field(default_factory=dict)
    histograms: dict[tuple[str, Labels], _Histogram] = field(default_factory=dict)
    _rollout_started: dict[tuple[str, str], float] = field(default_factory=dict)
    _failing: dict[tuple[str, str], str] = field(default_factory=dict)

    def record(self, samples: Iterable[MetricSample]) -> None:
        for s in samples:
            key = (s.name, s.labels)
            if s.kind == "counter":
                self.counters[key] = self.counters.get(key, 0.0) + s.value
            else:
                self.gauges[key] = s.value

    def observe_set(self, old: Obj | None, new: Obj, now: float) -> None:
        """Track rollouts from a set's status changes, for the update-duration histogram."""
        key = (namespace_of(new), name_of(new))
        before = (old or {}).get("status") or {}
        after = new.get("status") or {}
        if after.get("updateRevision") and after.get("updateRevision") != before.get("updateRevision") and before:
            self._rollout_started[key] = now
        done = after.get("currentRevision") == after.get("updateRevision")
        was_done = before.get("currentRevision") == before.get("updateRevision")
        if done and not was_done and key in self._rollout_started:
            strategy = str((new["spec"].get("updateStrategy") or {}).get("type", ROLLING_UPDATE))
            labels = (("namespace", key[0]), ("statefulset", key[1]), ("strategy", strategy))
            hist = self.histograms.setdefault(("statefulset_update_duration_seconds", labels), _Histogram())
            hist.observe(now - self._rollout_started.pop(key))
        self._observe_failure(key, after)

    def _observe_failure(self, key: tuple[str, str], status: Obj) -> None:
        reason = failing_reason(status.get("conditions"))
        before = self._failing.get(key)
        if reason == before:
            return
        if before is not None:  # the set no longer fails for that reason
            self.gauges[(ROLLOUT_FAILED, _failure_labels(key, before))] = 0.0
            del self._failing[key]
        if reason is not None:
            self.gauges[(ROLLOUT_FAILED, _failure_labels(key, reason))] = 1.0
            self._failing[key] = reason

    def export(self) -> dict[str, list[Mapping[str, Any]]]:
        out: dict[str, list[Mapping[str, Any]]] = {}
        for (name, labels), value in sorted({**self.gauges, **self.counters}.items()):
            out.setdefault(name, []).append({"labels": dict(labels), "value": value})
        for (name, labels), hist in sorted(self.histograms.items()):
            buckets = {("+Inf" if b == float("inf") else f"{b:g}"): c for b, c in zip(DURATION_BUCKETS, hist.buckets,
                                                                                       strict=True)}
            out.setdefault(name, []).append(
                {"labels": dict(labels), "value": {"count": hist.count, "sum": round(hist.total, 6),
                                                   "buckets": buckets}})
        return out
