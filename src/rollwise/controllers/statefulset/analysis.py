"""A canary's analysis step: the AnalysisRun it creates, and what the run's phase means for the rollout.

Argo Rollouts' step analysis (``rollout/analysis.go``, ``reconcileStepBasedAnalysisRun``), carried to a StatefulSet:
at an ``analysis`` step the controller creates one AnalysisRun (the templates and args of the step) if the set owns
none of that name, and reads its phase from the view on each reconcile; the AnalysisRun controller measures
(controllers/analysis/, a separate controller, as in Argo):

- ``Successful``: the step passes, and the next one starts in the same reconcile;
- ``Failed`` or ``Error``: the rollout aborts (api/abort.py), ``abortMessage`` naming the run and carrying its
  message (the failed metric and its value), as Argo aborts on a failed step analysis;
- ``Inconclusive``: the rollout holds until ``rollwise rollout promote`` moves past the step (Argo pauses with
  ``InconclusiveAnalysisRun``);
- anything else (``Pending``, ``Running``, no phase yet, or the run still to be created): the rollout holds.

The run's name is ``<update revision>-<step index>`` (the revision's name is ``<set>-<hash>``), so a new template
starts fresh runs. ``rollwise rollout retry`` counts ``status.rolloutAttempt`` up and the runs of the new attempt
take the suffix ``.<attempt>`` (Argo's own suffix for a name taken, ``utils/analysis/helpers.go``
``CreateWithCollisionCounter``): the failed run of the aborted attempt stays, with its measurements, for
``kubectl get analysisruns`` to show why the rollout was aborted, and is never read as the new attempt's verdict.
The set keeps the newest ``RUN_HISTORY_LIMIT`` completed runs of each kind (successful; failed, errored or
inconclusive) and deletes older ones, as Argo's ``successfulRunHistoryLimit`` / ``unsuccessfulRunHistoryLimit``
(default 5 each; ``utils/analysis/filter.go`` ``FilterAnalysisRunsToDelete``) do.
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.analysis import (
    ANALYSIS_API_VERSION,
    ANALYSIS_RUN,
    ERROR,
    FAILED,
    INCONCLUSIVE,
    PENDING,
    RUNNING,
    SUCCESSFUL,
)
from rollwise.api.meta import Obj, name_of, namespace_of, owner_reference, uid_of
from rollwise.api.steps import Step
from rollwise.controllers.plan import DeleteAnalysisRun, TerminateAnalysisRun

__all__ = [
    "ANALYSIS_INCONCLUSIVE",
    "ANALYSIS_RUNNING",
    "OUTCOMES",
    "RUN_HISTORY_LIMIT",
    "RUN_LABELS",
    "RUN_REVISION_LABEL",
    "SET_LABEL",
    "Verdict",
    "new_run",
    "run_name",
    "runs_to_delete",
    "runs_to_terminate",
    "still_running",
    "verdict_of",
]

SET_LABEL = "rollwise.dev/set"
RUN_REVISION_LABEL = "rollwise.dev/revision"
STEP_LABEL = "rollwise.dev/step"
RUN_LABELS = (SET_LABEL, RUN_REVISION_LABEL, STEP_LABEL)
ANALYSIS_RUNNING = "AnalysisRunning"
ANALYSIS_INCONCLUSIVE = "AnalysisInconclusive"
FAILED_PHASES = (FAILED, ERROR)
OUTCOMES = (SUCCESSFUL, FAILED, INCONCLUSIVE)
"""The verdicts a run that is still running may come to (the explorer plays each; Error reads as Failed)."""
RUN_HISTORY_LIMIT = 5
"""Completed runs kept per kind (successful, unsuccessful): Argo Rollouts' default for both history limits. Fixed,
not a field: ``rollingUpdate`` carries upstream's fields and ``steps``, and a second list of knobs beside them
would be a rollwise-only API for a number nobody has asked to change."""


def run_name(update_revision: str, index: int, attempt: int = 0) -> str:
    """The AnalysisRun of step ``index`` of the rollout to ``update_revision`` (``web-7cf995dbdb-2``; ``.N`` from
    the N-th retry)."""
    base = f"{update_revision}-{index}"
    return base if attempt <= 0 else f"{base}.{attempt}"


def new_run(sts: Obj, update_revision: str, index: int, step: Step, attempt: int = 0) -> Obj:
    """The AnalysisRun an analysis step creates: the step's templates and args, owned by the set (the garbage
    collector deletes it with the set), labelled so ``kubectl get ar -l rollwise.dev/set=web`` finds it."""
    return {
        "apiVersion": ANALYSIS_API_VERSION,
        "kind": ANALYSIS_RUN,
        "metadata": {
            "name": run_name(update_revision, index, attempt),
            "namespace": namespace_of(sts),
            "labels": {SET_LABEL: name_of(sts), RUN_REVISION_LABEL: update_revision, STEP_LABEL: str(index)},
            "ownerReferences": [owner_reference(sts)],
        },
        "spec": {
            "templates": [{"templateName": t} for t in step.templates],
            "args": [{"name": k, "value": v} for k, v in step.args],
        },
    }


def still_running(run: Obj) -> bool:
    """Whether a run has no verdict yet (no phase, ``Pending`` or ``Running``)."""
    return (run.get("status") or {}).get("phase") in (None, "", PENDING, RUNNING)


def runs_to_terminate(runs: Mapping[str, Obj], sts: Obj, keep: str | None) -> list[TerminateAnalysisRun]:
    """The set's runs still measuring that the rollout no longer waits on (a promote moved past the step, an abort,
    a new template): Argo's ``cancelAnalysisRuns`` sets ``spec.terminate`` on them, so a metrics source is not
    queried for a verdict nobody reads. ``keep``: the run of the analysis step in force. Once set, the flag is
    there, and an unchanged world plans nothing."""
    out = []
    for name in sorted(runs):
        run = owned_run(runs, sts, name)
        if name == keep or run is None or not still_running(run) or (run.get("spec") or {}).get("terminate"):
            continue
        out.append(TerminateAnalysisRun(name=name, namespace=namespace_of(run), uid=uid_of(run),
                                        reason="the rollout no longer waits on it"))
    return out


def runs_to_delete(runs: Mapping[str, Obj], sts: Obj, keep: str | None) -> list[DeleteAnalysisRun]:
    """The set's completed runs beyond the newest ``RUN_HISTORY_LIMIT`` of their kind (by creation, then name), in
    name order. Never a run still measuring, nor ``keep`` (the run of the step in force), nor the one
    ``status.currentStepAnalysisRun`` names (a failed run an abort shows). Once deleted, the runs are gone from the
    view, so an unchanged world plans nothing."""
    shown = (sts.get("status") or {}).get("currentStepAnalysisRun")
    named = shown.get("name") if isinstance(shown, Mapping) else None
    kinds: dict[bool, list[Obj]] = {True: [], False: []}
    for name in runs:
        run = owned_run(runs, sts, name)
        if run is None or name in (keep, named) or still_running(run):
            continue
        kinds[(run.get("status") or {}).get("phase") == SUCCESSFUL].append(run)
    out: list[DeleteAnalysisRun] = []
    for successful, done in kinds.items():
        done.sort(key=_created, reverse=True)
        word = "successful" if successful else "unsuccessful"
        out.extend(DeleteAnalysisRun(name=name_of(run), namespace=namespace_of(run),
                                     reason=f"the set keeps its {RUN_HISTORY_LIMIT} newest {word} analysis runs")
                   for run in done[RUN_HISTORY_LIMIT:])
    return sorted(out, key=lambda action: action.name)


def _created(run: Obj) -> tuple[float, str]:
    created = (run.get("metadata") or {}).get("creationTimestamp")
    return float(created) if isinstance(created, (int, float)) else 0.0, name_of(run)


def owned_run(runs: Mapping[str, Obj], sts: Obj, name: str) -> Obj | None:
    """The run of that name if the set controls it (one of the same name made by someone else is not its verdict)."""
    run = runs.get(name)
    if run is None:
        return None
    refs = (run.get("metadata") or {}).get("ownerReferences") or ()
    mine = any(ref.get("controller") and ref.get("uid") == uid_of(sts) for ref in refs)
    return run if mine else None


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a step's run says, for the rollout: ``passed``, ``failed`` (abort), or a hold with its reason."""

    name: str
    phase: str
    message: str
    exists: bool

    @property
    def passed(self) -> bool:
        return self.phase == SUCCESSFUL

    @property
    def failed(self) -> bool:
        return self.phase in FAILED_PHASES

    @property
    def reason(self) -> str:
        return ANALYSIS_INCONCLUSIVE if self.phase == INCONCLUSIVE else ANALYSIS_RUNNING

    def hold(self) -> str:
        """Why the rollout waits at the step, in words (the Progressing message)."""
        if not self.exists:
            return f"analysis run {self.name} is being created"
        if self.phase == INCONCLUSIVE:
            said = f": {self.message}" if self.message else ""
            return (f"analysis run {self.name} is Inconclusive{said}; `rollwise rollout promote` moves past the "
                    "step, `rollwise rollout abort` goes back")
        return f"waiting for analysis run {self.name} ({self.phase})"

    def abort_message(self) -> str:
        """``status.abortMessage``: the run and its own message (the metric and its last value)."""
        said = self.message or "no message"
        return f"aborted by analysis run {self.name} ({self.phase}): {said}"

    def status_field(self) -> dict[str, Any]:
        """``status.currentStepAnalysisRun`` (Argo's ``currentStepAnalysisRunStatus``)."""
        out: dict[str, Any] = {"name": self.name, "phase": self.phase}
        if self.message:
            out["message"] = self.message
        return out


def verdict_of(runs: Mapping[str, Obj], sts: Obj, name: str) -> Verdict:
    """The verdict of the set's run of that name; ``Pending`` for one not there (yet)."""
    run = owned_run(runs, sts, name)
    if run is None:
        return Verdict(name, PENDING, "", exists=False)
    status = run.get("status") or {}
    phase = status.get("phase")
    message = status.get("message")
    return Verdict(name, phase if isinstance(phase, str) and phase else PENDING,
                   message if isinstance(message, str) else "", exists=True)
