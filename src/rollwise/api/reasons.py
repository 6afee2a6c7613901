"""The ``Progressing`` condition's reasons that end a rollout, in one table: which say it is done and which say it
failed. ``rollwise status`` and ``get``, the dashboard, the metrics and the controllers' own ``Ready`` condition all
read these, so a reason a controller adds is either here or it is a reason the tools wait through.

A failing reason is one with ``Progressing=False``: the controller stopped and will not move on by itself; a
person (or a CI step) must look. This is Deployments' ``ProgressDeadlineExceeded`` widened to every halt the
StatefulSet controllers have (``tests/api/test_reasons.py`` reads ``controllers/`` and checks that each reason
set with ``Progressing=False`` there is in ``FAILING_REASONS``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.abort import ROLLOUT_ABORTED
from rollwise.api.lifecycle import PRE_DELETE_HOOK_TIMEOUT
from rollwise.api.rollout import PARTITION_ROLLED_OUT, ROLLOUT_COMPLETE

__all__ = [
    "CLAIM_RESIZE_REFUSED",
    "COMPLETE_REASONS",
    "FAILING_REASONS",
    "INVALID_SPEC",
    "IN_PLACE_IMPOSSIBLE",
    "PROGRESS_DEADLINE_EXCEEDED",
    "RECREATE_COMPLETE",
    "SAFETY_HALT",
    "failing_reason",
    "says_complete",
]

RECREATE_COMPLETE = "RecreateComplete"
PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
SAFETY_HALT = "SafetyHalt"
INVALID_SPEC = "InvalidSpec"
IN_PLACE_IMPOSSIBLE = "InPlaceUpdateImpossible"
CLAIM_RESIZE_REFUSED = "ClaimResizeRefused"

COMPLETE_REASONS = frozenset({ROLLOUT_COMPLETE, RECREATE_COMPLETE, PARTITION_ROLLED_OUT})
"""``Progressing=True`` reasons that say the rollout reached what was asked (``PartitionRolledOut``: held at the
partition on purpose)."""


def says_complete(status: object, reason: object) -> bool:
    """Whether a Progressing condition (its ``status`` and ``reason``) says the rollout reached what was asked: the
    one reading of the condition, for Ready (controllers/statefulset/readiness.py), the controller's hold of a
    finished condition and the projection (``rollout_complete`` in api/rollout.py judges the pods themselves)."""
    return status == "True" and reason in COMPLETE_REASONS

FAILING_REASONS: Mapping[str, str] = {
    PROGRESS_DEADLINE_EXCEEDED: "spec.progressDeadlineSeconds passed without progress",
    SAFETY_HALT: "EnforcedRollingUpdate's safety halt holds: too many pods are unhealthy at the update revision",
    INVALID_SPEC: "the set's spec is invalid: the controller does nothing until it is fixed",
    PRE_DELETE_HOOK_TIMEOUT: "a pod's pre-delete hook was not released within spec.lifecycle.preDelete.timeoutSeconds",
    IN_PLACE_IMPOSSIBLE: "podUpdatePolicy InPlaceOnly and the change cannot be made in place",
    CLAIM_RESIZE_REFUSED: "a volume claim cannot grow: its storage class does not allow expansion",
    ROLLOUT_ABORTED: "the rollout was aborted: every pod returns to the stable revision until `rollwise rollout "
                     "retry` or a new template",
}
"""``Progressing=False`` reasons that fail the rollout, each with what it means (the CLI docs list them)."""


def failing_reason(conditions: Sequence[Mapping[str, Any]] | None) -> str | None:
    """The failing reason of a status's ``Progressing`` condition, or None when it does not say the rollout failed."""
    for condition in conditions or ():
        if condition.get("type") == "Progressing":
            reason = condition.get("reason")
            if condition.get("status") == "False" and reason in FAILING_REASONS:
                return str(reason)
            return None
    return None
