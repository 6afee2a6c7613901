"""When a rollout is complete: one rule for the controller's ``RolloutComplete`` condition, the simulator's summary
(``completed``, ``rolloutSeconds``) and ``waitFor: {rolloutComplete: ...}``."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from rollwise.api.identity import revision_of
from rollwise.api.meta import name_of
from rollwise.api.predicates import is_unavailable

__all__ = ["rollout_complete"]


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
