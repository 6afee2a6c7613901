"""Canary steps: where a rollout with ``rollingUpdate.steps`` stands, and the partition that step implies.

Argo Rollouts' canary semantics (``rollout/canary.go``, ``utils/replicaset/canary.go``; docs ``features/canary``),
carried to a StatefulSet the way OpenKruise Rollout moves an Advanced StatefulSet's batches: each step sets an
*effective partition*, ``max(spec partition, replicas - pods the step asks for)``, and the rolling update does the
rest. So every rule that reads the partition (``Sync.floor``) keeps applying to a canary unchanged: highest ordinal
first, maxUnavailable, PodDisruptionBudgets, pre-delete hooks, the quorum-aware order, the creation phase's
revision for a missing ordinal, podProgressTimeoutSeconds.

- ``replicas`` steps are done once every ordinal from their partition up is updated and available (the rule that
  says ``PartitionRolledOut``); then the next step starts in the same reconcile.
- A pause holds at the partition of the last ``replicas`` step before it; a timed one starts its clock once
  (``status.pauseStartTime``, written when the pause begins) and the plan asks to be woken when it ends; ``pause:
  {}`` holds until ``rollwise rollout promote`` writes ``status.currentStepIndex`` one further (Argo's promote).
- An ``analysis`` step creates its AnalysisRun and holds until the run says Successful (then the next step
  starts in the same reconcile); a Failed or Error run aborts the rollout (analysis.py); ``promote`` skips it.
- After the last step (or ``promote --full``: ``status.promoteFull``, Argo's name) the spec's own partition rules.
- A new update revision starts a new rollout at step 0: the step index belongs to ``status.updateRevision``.
  A revert to the current revision is no rollout (nothing is outdated), as Argo skips steps back to stable.

Status, written only when its meaning changes (a reconcile of an unchanged world computes the same fields):
``currentStepIndex`` (``len(steps)`` once past the last), ``pauseStartTime``, ``stableRevision`` (the revision the
set runs in full, what a later abort goes back to), ``promoteFull`` while it applies, ``currentStepAnalysisRun``
(``{name, phase, message}``) while an analysis step is in force and ``rolloutAttempt`` once ``retry`` counted it up.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.abort import Abort
from rollwise.api.meta import Obj, format_time
from rollwise.api.steps import Step, floor_at_step, set_steps, wanted_at_step
from rollwise.api.strategies import handed_to_quorum, partition_floor
from rollwise.controllers.census import REQUEUE_EPSILON
from rollwise.controllers.plan import CreateAnalysisRun
from rollwise.controllers.statefulset.analysis import Verdict, new_run, run_name, verdict_of
from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.progress import rollout_complete

__all__ = ["STEP_FIELDS", "STEP_PAUSED", "StepReport", "advance_steps", "failed_analysis", "with_step_condition"]

STEP_PAUSED = "RolloutStepPaused"
STEP_FIELDS = ("currentStepIndex", "pauseStartTime", "stableRevision", "promoteFull", "currentStepAnalysisRun",
               "rolloutAttempt")
"""The status fields this module owns (status.py compares them like the counters)."""


@dataclass(frozen=True, slots=True)
class StepReport:
    """Where the rollout stands after this reconcile's decision."""

    steps: tuple[Step, ...]
    index: int
    pause_start: float | None = None
    full: bool = False
    hold: str | None = None
    """Why the rollout waits at ``index`` (a pause, an analysis), or None while a replicas step moves."""
    reason: str | None = None
    attempt: int = 0
    """``status.rolloutAttempt``: how often ``retry`` started this rollout again (the runs' name suffix)."""
    run: Verdict | None = None
    """The AnalysisRun of the analysis step in force."""
    abort: Abort | None = None
    """The abort this reconcile decides: the step's run failed."""

    def settled(self, status: Mapping[str, Any]) -> StepReport:
        """Past the last step once this reconcile's status promotes the update revision to current (every replica
        updated and available: a scale-in can finish a canary early), so the next reconcile computes the same."""
        if status.get("currentRevision") != status.get("updateRevision") or self.index >= len(self.steps):
            return self
        return StepReport(self.steps, len(self.steps))

    def fields(self, stable_revision: str) -> Obj:
        out: Obj = {"currentStepIndex": self.index, "stableRevision": stable_revision}
        if self.pause_start is not None:
            out["pauseStartTime"] = self.pause_start
        if self.full:
            out["promoteFull"] = True
        if self.run is not None:
            out["currentStepAnalysisRun"] = self.run.status_field()
        if self.attempt > 0:
            out["rolloutAttempt"] = self.attempt
        return out


def _recorded(status: Mapping[str, Any], update_name: str, count: int) -> tuple[int, float | None, bool, int]:
    """The step index, pause start, --full and attempt the status holds for this update revision (step 0 of the
    first attempt for a new one)."""
    if status.get("updateRevision") != update_name:
        return 0, None, False, 0
    index = status.get("currentStepIndex")
    # Steps edited mid-rollout: the rollout goes on from where it stood, past the end if the list is now shorter.
    index = min(index, count) if isinstance(index, int) and not isinstance(index, bool) and index >= 0 else 0
    start = status.get("pauseStartTime")
    attempt = status.get("rolloutAttempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 0 else 0
    return index, float(start) if isinstance(start, (int, float)) else None, status.get("promoteFull") is True, \
        attempt


def failed_analysis(sts: Obj, update_name: str, current_name: str, runs: Mapping[str, Obj]) -> Verdict | None:
    """The failed run of the analysis step the status records for this rollout, if it failed: the rollout is aborted
    from this reconcile on, so the pods go back at once (the reconcile reads it before it picks the revision every
    pod should run)."""
    status = sts.get("status") or {}
    steps = set_steps(sts)
    if not steps or update_name == current_name:
        return None
    index, _, full, attempt = _recorded(status, update_name, len(steps))
    if full or index >= len(steps) or steps[index].kind != "analysis":
        return None
    verdict = verdict_of(runs, sts, run_name(update_name, index, attempt))
    return verdict if verdict.failed else None


def _floor_at(sync: Sync, steps: tuple[Step, ...], index: int, spec_floor: int) -> int:
    return floor_at_step(steps, index, len(sync.span), spec_floor)


def _members_done(sync: Sync, steps: tuple[Step, ...], index: int) -> bool:
    """A quorum-aware set's ``replicas`` step: as many members updated and available as it asks, whichever they
    are (the quorum-aware controller picks them: followers first, the leader last; controllers/quorum)."""
    updated = sum(1 for pod in sync.replicas if pod is not None and not sync.outdated(pod) and sync.available(pod))
    return updated >= wanted_at_step(steps, index, len(sync.span))


def advance_steps(sync: Sync, runs: Mapping[str, Obj], *, moving: bool) -> StepReport | None:
    """Resolve the step in force, moving past each that is done when ``moving`` (not paused, not being deleted),
    and set ``sync.floor`` to its partition (a quorum-aware set has none). ``runs``: the AnalysisRuns of the view,
    by name. None for a set without steps."""
    steps = set_steps(sync.sts, sync.update_type)
    if not steps:
        return None
    # A quorum-aware set (OnDelete) has no partition: its steps cap how many members the quorum-aware controller
    # updates (api/steps.canary_limit), and a replicas step is done by that count.
    quorum = handed_to_quorum(sync.sts)
    # The spec's partition: Sync.floor holds the recorded step's already (limits.py), which this reconcile may move.
    spec_floor = partition_floor(sync.spec.get("updateStrategy") or {}, sync.update_type)
    if sync.update_name == sync.current_name:
        return StepReport(steps, len(steps))  # no rollout under way (created, completed or reverted)
    index, start, full, attempt = _recorded(sync.sts.get("status") or {}, sync.update_name, len(steps))
    if full:
        return StepReport(steps, index, full=True, attempt=attempt)
    while index < len(steps):
        step = steps[index]
        if not quorum:
            sync.floor = _floor_at(sync, steps, index, spec_floor)
        if step.kind == "replicas":
            if not moving or not (_members_done(sync, steps, index) if quorum else rollout_complete(sync)):
                return StepReport(steps, index, attempt=attempt)
        elif step.kind == "analysis":
            verdict = verdict_of(runs, sync.sts, run_name(sync.update_name, index, attempt))
            if not verdict.passed or not moving:
                return _at_analysis(sync, steps, index, attempt, verdict, moving=moving)
        else:
            if start is None and moving:
                # Whole seconds, what the wire keeps (cluster/wire.py), rounded up: a pause never lasts less than
                # its duration.
                start = float(math.ceil(sync.now))
            if step.duration is None or start is None:
                return StepReport(steps, index, start, hold="paused until promoted", reason=STEP_PAUSED,
                                  attempt=attempt)
            end = start + step.duration
            if sync.now < end or not moving:
                sync.requeue_at(end)
                return StepReport(steps, index, start, hold=f"paused for {step.duration} s, until "
                                                            f"{format_time(end)}", reason=STEP_PAUSED,
                                  attempt=attempt)
            start = None
        index += 1
    sync.floor = spec_floor
    return StepReport(steps, index, attempt=attempt)


def _at_analysis(sync: Sync, steps: tuple[Step, ...], index: int, attempt: int, verdict: Verdict, *,
                 moving: bool) -> StepReport:
    """The rollout stands at an analysis step its run has not passed: it aborts on a failed run (whether or not
    the set moves: the verdict is in), else it holds, creating the run first if the set moves and has none."""
    if verdict.failed:
        # Reached in this reconcile, which acts at the step's partition: the next one takes the pods back.
        sync.requeue_at(sync.now + REQUEUE_EPSILON)
        return StepReport(steps, index, attempt=attempt, run=verdict,
                          abort=Abort(sync.update_name, verdict.abort_message()))
    if not verdict.exists and moving:
        run = new_run(sync.sts, sync.update_name, index, steps[index], attempt)
        sync.actions.append(CreateAnalysisRun(run=run, reason=f"step {index + 1} of {len(steps)} is an analysis"))
    return StepReport(steps, index, hold=verdict.hold(), reason=verdict.reason, attempt=attempt, run=verdict)


def with_step_condition(report: StepReport | None, wanted: list[Obj], *, paused: bool) -> list[Obj]:
    """The Progressing condition saying where the rollout stands ("step 2 of 3: paused until promoted"); the
    others as they are. A held step is ``Unknown`` (it neither progresses nor fails: a person or the clock moves
    it); ``spec.paused`` keeps its own words."""
    if report is None or paused or report.index >= len(report.steps):
        return wanted
    where = f"step {report.index + 1} of {len(report.steps)} ({report.steps[report.index].describe()})"
    out = []
    for condition in wanted:
        if condition.get("type") != "Progressing":
            out.append(condition)
        elif report.hold is not None:
            out.append({**condition, "status": "Unknown", "reason": report.reason,
                        "message": f"{where}: {report.hold}"})
        else:
            out.append({**condition, "message": f"{where}: {condition.get('message', '')}"})
    return out
