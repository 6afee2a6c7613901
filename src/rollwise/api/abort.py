"""Aborting a rollout and retrying it: the status ``rollwise rollout abort`` and ``retry`` write, and its reading.

Argo Rollouts' abort (``pkg/kubectl-argo-rollouts/cmd/abort``: ``status.abort: true``; ``cmd/retry`` clears it), on
a StatefulSet: while a rollout is aborted the controller takes the stable revision (``status.currentRevision``) as
the revision every pod should run, so each pod at the update revision goes back under every rule a rolling update
keeps (highest ordinal first, maxUnavailable, PodDisruptionBudgets, pre-delete hooks, the quorum-aware order), and
the spec keeps the new template (a GitOps tool's spec stays as its owner wrote it).

The abort belongs to one update revision, ``status.abortedRevision``: a new template change is a new rollout and
the abort no longer applies (Argo resets ``abort`` on a new pod template hash). ``status.abortMessage`` says why
(the CLI's words, or the failed analysis run and its message, which names the metric and its value).
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ABORTED_BY_CLI",
    "ABORT_FIELDS",
    "KEPT_WHILE_ABORTED",
    "ROLLOUT_ABORTED",
    "Abort",
    "NothingToAbort",
    "NothingToRetry",
    "abort_of",
    "aborted_status",
    "is_aborted",
    "retried_status",
]

ROLLOUT_ABORTED = "RolloutAborted"
ABORTED_BY_CLI = "aborted by rollwise rollout abort"
ABORT_FIELDS = ("abort", "abortedRevision", "abortMessage")
"""The status fields an abort writes and the controller keeps while the abort applies."""
KEPT_WHILE_ABORTED = ("rolloutAttempt", "currentStepAnalysisRun")
"""Step fields the controller keeps while the abort applies: the attempt ``retry`` counts up, and the analysis run
that failed (``rollwise get`` shows it)."""


@dataclass(frozen=True, slots=True)
class Abort:
    """An abort in force: the update revision it stops and why."""

    revision: str
    message: str

    def fields(self) -> dict[str, Any]:
        return {"abort": True, "abortedRevision": self.revision, "abortMessage": self.message}


def abort_of(status: Mapping[str, Any], update_revision: str, current_revision: str) -> Abort | None:
    """The abort that applies to the rollout to ``update_revision`` (the spec's), or None: none was asked, it was
    asked for another revision (a template change since starts a new rollout), or there is no rollout (the spec
    went back to the stable revision)."""
    revision = status.get("abortedRevision")
    if not is_aborted(status) or revision != update_revision or update_revision == current_revision:
        return None
    message = status.get("abortMessage")
    return Abort(revision, message if isinstance(message, str) and message else ABORTED_BY_CLI)


def is_aborted(status: Mapping[str, Any]) -> bool:
    """Whether a status says its rollout is aborted: never complete, whatever its counters (which count the pods at
    the stable revision the controller takes them back to), until ``retry`` or a new template."""
    return status.get("abort") is True


class NothingToAbort(ValueError):
    """``abort`` on a set with no rollout under way, or one aborted already."""


class NothingToRetry(ValueError):
    """``retry`` on a set whose rollout is not aborted."""


def aborted_status(sts: Mapping[str, Any], message: str = ABORTED_BY_CLI) -> dict[str, Any]:
    """The status ``rollwise rollout abort`` writes through the status subresource (the write carries the
    resourceVersion it read): the abort, for the update revision the status names."""
    status = dict(sts.get("status") or {})
    name = (sts.get("metadata") or {}).get("name", "")
    update = status.get("updateRevision")
    if is_aborted(status):
        raise NothingToAbort(f"{name}: the rollout to revision {status.get('abortedRevision')} is aborted already "
                             "(`rollwise rollout retry` starts it again)")
    if not update or update == status.get("currentRevision"):
        raise NothingToAbort(f"{name} has no rollout under way to abort")
    status.update(Abort(str(update), message).fields())
    return status


def retried_status(sts: Mapping[str, Any]) -> dict[str, Any]:
    """The status ``rollwise rollout retry`` writes: the abort cleared, the steps from the first again, and the
    attempt counted up, so the analysis steps create fresh runs (their names carry it: a failed run of the aborted
    attempt is kept as the record of why, and never read as the new attempt's verdict)."""
    status = dict(sts.get("status") or {})
    if not is_aborted(status):
        name = (sts.get("metadata") or {}).get("name", "")
        raise NothingToRetry(f"{name} has no aborted rollout to retry")
    # While aborted the status names the stable revision as the update revision (every pod's target): the retried
    # rollout is to the aborted one again, and its step index and attempt belong to it (controllers/statefulset/
    # steps.py reads them only for the update revision the status names).
    status["updateRevision"] = status.get("abortedRevision") or status.get("updateRevision")
    for key in (*ABORT_FIELDS, "pauseStartTime", "promoteFull", "currentStepAnalysisRun"):
        status.pop(key, None)
    attempt = status.get("rolloutAttempt")
    status["rolloutAttempt"] = (attempt if isinstance(attempt, int) and not isinstance(attempt, bool)
                                and attempt > 0 else 0) + 1
    status["currentStepIndex"] = 0
    return status
