"""The hand-over fence: the mark ``rollwise migrate`` puts on a set before it hands the set's pods to the other
StatefulSet resource (``cli/handover.py``).

A set carrying ``HANDOVER_ANNOTATION`` (its value names the set taking over, e.g. ``statefulset.apps/web``) is
left alone by rollwise's controllers exactly as a set being deleted is (reference §4.4): no pod is created, updated
or deleted, nothing is adopted; only its status is recomputed. The executor's live read of an owner before an
adoption (``invariants.adoption``) refuses a fenced owner too, so a controller whose cache has not yet seen the mark
does not adopt for it either. kube-controller-manager does not know the mark; it needs none, since its
ControllerRefManager reads the owner live before adopting and the orphan finalizer orders the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.meta import annotations_of, deletion_timestamp

__all__ = ["HANDOVER_ANNOTATION", "handed_over_to", "leaves_pods_alone"]

HANDOVER_ANNOTATION = "rollwise.dev/handover-to"


def handed_over_to(sts: Mapping[str, Any]) -> str | None:
    """The set taking over from ``sts`` (the fence's value), or None when ``sts`` is not fenced."""
    value = annotations_of(sts).get(HANDOVER_ANNOTATION)
    return None if value is None else str(value)


def leaves_pods_alone(sts: Mapping[str, Any]) -> bool:
    """The set's controller neither writes its pods nor adopts: the set is being deleted or handed over."""
    return deletion_timestamp(sts) is not None or handed_over_to(sts) is not None
