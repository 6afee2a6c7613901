"""When a rollout is complete: one rule for the controller's ``Progressing`` and ``Ready`` conditions, the
simulator's summary (``completed``, ``rolloutSeconds``), ``waitFor: {rolloutComplete: ...}`` and
``rollwise rollout status``. The partition floor it reads comes from the strategy table (``api/strategies.py``).

The rule has two forms over the same facts. ``rollout_complete`` judges the pods (the controller and the
simulator see them); ``status_progress`` judges the counters a controller wrote from those pods (what a client
such as ``rollout status`` sees). A rollout held at its partition on purpose — every ordinal from the partition up
updated and available, the ones below left at their revision — has reached what was asked: ``PartitionRolledOut``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rollwise.api.abort import is_aborted
from rollwise.api.identity import revision_of
from rollwise.api.meta import name_of
from rollwise.api.predicates import is_unavailable
from rollwise.api.strategies import partition_floor

__all__ = [
    "PARTITION_ROLLED_OUT",
    "ROLLOUT_COMPLETE",
    "ROLLOUT_IN_PROGRESS",
    "StatusProgress",
    "rollout_complete",
    "status_progress",
]

ROLLOUT_COMPLETE = "RolloutComplete"
PARTITION_ROLLED_OUT = "PartitionRolledOut"
ROLLOUT_IN_PROGRESS = "RolloutInProgress"


def rollout_complete(
    slots: Sequence[Mapping[str, Any] | None],
    *,
    outside_range: int,
    floor: int,
    update_revision: str,
    min_ready_seconds: float,
    now: float,
    deleting: Collection[str] = (),
    indexes: Iterable[int] | None = None,
) -> bool:
    """No pod outside the range remains, every in-range ordinal has a pod that is available (Ready for longer than
    minReadySeconds, not terminating, not being deleted), and from the partition up each runs the update revision.

    ``slots[i]`` is the pod of the i-th ordinal in range (None if missing); ``floor`` is the partition as an index;
    ``deleting`` names pods that a plan being built deletes. Available, not merely Ready: the same notion as the
    maxUnavailable budget and the summary's unavailability figures (reference §5.7, bug #136831).

    ``indexes``: only these slots need looking at (the caller knows the others pass: the controller's quiet pods).
    """
    if outside_range:
        return False
    for index in range(len(slots)) if indexes is None else indexes:
        pod = slots[index]
        if pod is None or is_unavailable(pod, min_ready_seconds, now) or (deleting and name_of(pod) in deleting):
            return False
        if index >= floor and revision_of(pod) != update_revision:
            return False
    return True


@dataclass(frozen=True, slots=True)
class StatusProgress:
    """``status_progress``'s verdict: ``reason`` is ROLLOUT_COMPLETE, PARTITION_ROLLED_OUT or ROLLOUT_IN_PROGRESS;
    ``waiting`` says what is missing (empty when done)."""

    reason: str
    waiting: tuple[str, ...]
    replicas: int
    updated: int
    floor: int

    @property
    def done(self) -> bool:
        return not self.waiting


def _count(status: Mapping[str, Any], key: str) -> int:
    value = status.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def status_progress(sts: Mapping[str, Any]) -> StatusProgress:
    """``rollout_complete`` read from the counters a controller wrote: the latest generation observed, exactly
    ``spec.replicas`` pods, all available, and every ordinal from the partition up updated. The counters are
    computed from the same pods (``status.py``), so the two forms agree on the controller's own status; this one
    also reads a status kube-controller-manager wrote (an ``apps/v1`` set on a real cluster, where
    ``currentRevision`` is not promoted under OnDelete, bug #136833, so it is not asked for)."""
    spec: Mapping[str, Any] = sts.get("spec") or {}
    status: Mapping[str, Any] = sts.get("status") or {}
    want = spec.get("replicas", 1)
    want = want if isinstance(want, int) and not isinstance(want, bool) else 1
    floor = min(partition_floor(spec.get("updateStrategy") or {}), want)
    generation = (sts.get("metadata") or {}).get("generation") or 0
    updated = _count(status, "updatedReplicas")
    waiting: list[str] = []
    observed = _count(status, "observedGeneration")
    if observed == 0 or (isinstance(generation, int) and observed < generation):
        waiting.append(f"generation {generation} not yet observed")
    if updated < want - floor:
        waiting.append(f"{updated} of {want - floor} replicas updated")
    available, present = _count(status, "availableReplicas"), _count(status, "replicas")
    if available != want or present != want:
        waiting.append(f"{available} of {want} replicas available" if present <= want
                       else f"{present - want} pods above the range still to go")
    if is_aborted(status):
        waiting.append("the rollout is aborted (rollwise rollout retry starts it again)")
    if waiting:
        return StatusProgress(ROLLOUT_IN_PROGRESS, tuple(waiting), want, updated, floor)
    reason = ROLLOUT_COMPLETE if updated >= want else PARTITION_ROLLED_OUT
    return StatusProgress(reason, (), want, updated, floor)
