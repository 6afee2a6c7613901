"""The AnalysisRun controller in the simulator: the pure controller decides (controllers/analysis/: which metrics
are due, the phases by Argo's rules, when to requeue), and the scenario's recorded values measure
(scenario/analyses.py) where a cluster's drivers call the web or Prometheus provider.

One reconcile takes the steps of ``runtime.analysis.reconcile_run`` (``up``'s and the operator's), in virtual time,
on the one controller host: a run whose templates are not resolved gets its spec written and is looked at again; the
metrics due are measured together, then folded into the status in the metrics' order; the status is written if it
changed; the run is looked at again when time alone makes a metric due, a second at the least. It runs at the
controllers' phase of an instant, so a canary's analysis step plays out as on a cluster: the StatefulSet controller
creates the run, this measures it, the run's phase wakes the set (runtime/routing.py).

Each measurement and each verdict is an event of the run record: ``AnalysisMeasured`` (``analysisRun``,
``statefulSet``, ``metric``, ``value`` or ``error``, ``phase``) and ``AnalysisCompleted`` (``analysisRun``,
``statefulSet``, ``phase``, ``message``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.analysis import Measured
from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.meta import Obj, labels, name_of, namespace_of
from rollwise.api.revisions import template_of
from rollwise.cluster.resources import ANALYSIS_RUN, ANALYSIS_TEMPLATE
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.analysis import completion_events, decide, next_reconcile, record
from rollwise.controllers.statefulset.analysis import RUN_REVISION_LABEL, SET_LABEL
from rollwise.runtime.actors import ANALYSIS_CONTROLLER
from rollwise.runtime.analysis import MIN_REQUEUE
from rollwise.runtime.clock import Clock
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.host import ControllerHost
from rollwise.runtime.limiter import ItemExponentialRateLimiter
from rollwise.runtime.registrations import ANALYSIS
from rollwise.runtime.wakes import ObjectKey
from rollwise.scenario.analyses import RecordedAnalyses

__all__ = ["AnalysisPlayer"]

_COUNTERS = ("successful", "failed", "inconclusive", "error")
_RETRY = 1.0
"""Seconds before a reconcile the store refused (a stale read: Conflict) runs again, as up's."""


class AnalysisPlayer:
    """Reconciles AnalysisRuns on the one controller host (``runtime/host.py``), inline on ``clock``'s timers,
    measuring from ``recorded``; the driver registers it with its change dispatcher (``register``), which wakes a run
    by the registration row's rule (``registrations.ANALYSIS``), as in ``up`` and the operator."""

    def __init__(self, cluster: MemoryCluster, clock: Clock, recorded: RecordedAnalyses,
                 emit: Callable[..., None]) -> None:
        self._cluster = cluster
        self._clock = clock
        self._recorded = recorded
        self._emit = emit
        # A refused write is retried after a fixed second, as up's (no growing back-off: one run's timeline stays
        # readable on its own).
        self.host: ControllerHost[ObjectKey] = ControllerHost(
            ANALYSIS.actor, clock=clock, inline=self._reconcile, limiter=ItemExponentialRateLimiter(_RETRY, _RETRY))

    def register(self, changes: ChangeDispatcher) -> None:
        changes.add_objects(ANALYSIS, self._cluster, self.host.wake_all)

    def _reconcile(self, key: ObjectKey) -> tuple[float | None, bool]:
        _, namespace, name = key
        try:
            run = self._cluster.get(ANALYSIS_RUN, namespace, name)
        except NotFound:
            return None, False
        now = self._clock.now()
        templates = {name_of(t): t for t in self._cluster.list(ANALYSIS_TEMPLATE, namespace)}
        plan = decide(run, templates, now)
        try:
            if plan.spec is not None:  # the templates resolved into the run's metrics, once; then measure
                self._cluster.update({**run, "spec": plan.spec}, actor=ANALYSIS_CONTROLLER)
                return 0.0, False
            stored: dict[str, Any] = dict(run.get("status") or {})
            current: Obj = {**run, "status": plan.status if plan.status is not None else stored}
            events = list(plan.events)
            if plan.measure:
                # Every metric due is measured at this instant, before any is recorded (runtime/analysis.py).
                results = [self._measure(current, task.metric) for task in plan.measure]
                before = current["status"]
                for task, measured in zip(plan.measure, results, strict=True):
                    current = {**run, "status": record(current, task.metric, measured, now, started=now)}
                    self._measured(run, task.metric, measured, current["status"])
                events += completion_events(run, before, current["status"])
            if current["status"] != stored:
                current = self._cluster.update_status(current, actor=ANALYSIS_CONTROLLER)
        except ApiStatusError:
            return None, True
        for _, reason, _ in events:
            status = current.get("status") or {}
            self._emit(now, "AnalysisCompleted", analysisRun=name, statefulSet=labels(run).get(SET_LABEL, ""),
                       phase=status.get("phase"), message=status.get("message", ""), reason=reason)
        requeue = next_reconcile(current, now)
        return (None if requeue is None else max(requeue, MIN_REQUEUE)), False

    def _measure(self, run: Obj, metric: str) -> Measured:
        """The next recorded value of ``metric`` for this run: as many measurements in as it has taken."""
        templates = [str(t.get("templateName", "")) for t in (run.get("spec") or {}).get("templates") or ()]
        recording = self._recorded.metric(templates, metric)
        if recording is None:
            return Measured(error=f"no recorded values for metric {metric} (analyses: of the scenario)")
        taken = sum(int(_result(run["status"], metric).get(k, 0)) for k in _COUNTERS)
        recorded = recording.at(self._image(run), taken)
        return Measured(value=recorded.value, error=recorded.error)

    def _image(self, run: Obj) -> str:
        """The image of the first container of the run's revision (its ``rollwise.dev/revision`` label)."""
        revision = labels(run).get(RUN_REVISION_LABEL, "")
        try:
            template = template_of(self._cluster.get("ControllerRevision", namespace_of(run), revision))
        except (NotFound, KeyError, TypeError):
            return ""
        containers = (template.get("spec") or {}).get("containers") or [{}]
        return str(containers[0].get("image", ""))

    def _measured(self, run: Obj, metric: str, measured: Measured, status: Mapping[str, Any]) -> None:
        last = (_result(status, metric).get("measurements") or [{}])[-1]
        said: dict[str, Any] = {"error": measured.error} if measured.error is not None else {"value": measured.value}
        self._emit(self._clock.now(), "AnalysisMeasured", analysisRun=name_of(run),
                   statefulSet=labels(run).get(SET_LABEL, ""), metric=metric, phase=last.get("phase"), **said)


def _result(status: Mapping[str, Any], metric: str) -> Mapping[str, Any]:
    found: Mapping[str, Any] = next((r for r in status.get("metricResults") or () if r.get("name") == metric), {})
    return found
