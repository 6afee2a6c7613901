"""Adoption's rule, stated once: an owner adopts only after a live read says it may (upstream's
``ControllerRefManager.canAdopt`` over ``RecheckDeletionTimestamp``, pkg/controller/controller_ref_manager.go).

A controller decides from its cache, and a cache may still hold an owner that is already being deleted or gone: the
Orphan delete of ``rollwise migrate`` released the pods, a stale cache re-adopted them 2-10 ms later, and the garbage
collector then deleted them with their gone owner (issue 38). So before the first adoption write of a round the
executor (``runtime.execute``, every driver) reads the owner uncached and asks ``adoption_refusal``; a refusal stops
the round, as upstream's sync returns the error. The explorer does not model adoption (its sets own their pods
from the start), so the rule is exercised by the executor's tests and the hand-over tests on ``up``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.handover import handed_over_to
from rollwise.api.meta import deletion_timestamp, name_of, namespace_of, uid_of

__all__ = ["adoption_refusal"]


def adoption_refusal(owner: Mapping[str, Any], fresh: Mapping[str, Any] | None) -> str | None:
    """Why ``owner`` (as the cache holds it) may not adopt, given ``fresh``, an uncached read of it (None: not
    found); None when it may. Upstream's wording for the first two."""
    where = f"{namespace_of(owner)}/{name_of(owner)}"
    if fresh is None:
        return f"original StatefulSet {where} is gone: got NotFound"
    if uid_of(fresh) != uid_of(owner):
        return f"original StatefulSet {where} is gone: got uid {uid_of(fresh)}, wanted {uid_of(owner)}"
    if deletion_timestamp(fresh) is not None:
        return f"StatefulSet {where} has just been deleted at {fresh['metadata']['deletionTimestamp']}"
    to = handed_over_to(fresh)
    if to is not None:
        return f"StatefulSet {where} is being handed over to {to}"
    return None

