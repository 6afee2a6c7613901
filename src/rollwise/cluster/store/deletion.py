"""What a delete request does to an object, as the API server decides it (reference kubectl-wire.md §4.4 item 4).

- a pod stops gracefully: ``deletionTimestamp`` is set (the time deletion was requested) with
  ``deletionGracePeriodSeconds`` from the request, else the pod's ``terminationGracePeriodSeconds`` (30); a pod
  in phase Failed or Succeeded has nothing left to stop and goes at once; a repeated delete may only shorten the
  grace period;
- any other object goes at once, unless finalizers hold it (then it is terminating until they are removed);
- foreground propagation adds the ``foregroundDeletion`` finalizer (the collector removes it once no blocking
  dependent remains); orphan propagation adds the ``orphan`` finalizer (removed once the dependents' references
  to the object are gone), as kube-apiserver does;
- a deletion request bumps ``generation``.

The store turns the outcome into a write; the rules stay here, pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rollwise.api.meta import Obj
from rollwise.api.predicates import status_of
from rollwise.cluster.store.gc import FOREGROUND_FINALIZER, ORPHAN_FINALIZER

__all__ = ["DEFAULT_POD_GRACE_SECONDS", "Deletion", "plan_deletion", "without_owner_refs"]

DEFAULT_POD_GRACE_SECONDS = 30

Deletion = tuple[Literal["remove", "terminate"], Obj] | None
"""None: nothing to do; ``("remove", last)``: the object goes; ``("terminate", new)``: it stays, terminating."""


def plan_deletion(obj: Obj, *, pod: bool, grace: float | None, foreground: bool, now: float,
                  orphan: bool = False) -> Deletion:
    """The outcome of a delete request for ``obj`` (a pod if ``pod``), with the requested grace period if any."""
    meta = obj["metadata"]
    terminating = meta.get("deletionTimestamp") is not None
    if pod:
        if grace is None:
            grace = (obj.get("spec") or {}).get("terminationGracePeriodSeconds", DEFAULT_POD_GRACE_SECONDS)
        if status_of(obj).get("phase") in ("Failed", "Succeeded"):
            grace = 0  # the API server: a terminated pod has nothing left to stop
        current = meta.get("deletionGracePeriodSeconds")
        if terminating and current is not None and grace >= current:
            return None  # a repeated delete may only shorten the grace period
    elif terminating:
        return None
    else:
        grace = 0
    finalizers = list(meta.get("finalizers") or ())
    if foreground and not terminating and FOREGROUND_FINALIZER not in finalizers:
        finalizers.append(FOREGROUND_FINALIZER)
    if orphan and not terminating and ORPHAN_FINALIZER not in finalizers:
        finalizers.append(ORPHAN_FINALIZER)
    if grace == 0 and not finalizers:
        return "remove", {**obj, "metadata": dict(meta)}
    new_meta = {**meta, "deletionGracePeriodSeconds": grace}
    if not terminating:
        new_meta["deletionTimestamp"] = now
    if finalizers:
        new_meta["finalizers"] = finalizers
    new_meta["generation"] = meta.get("generation", 1) + 1  # the API server bumps it on a deletion request
    return "terminate", {**obj, "metadata": new_meta}


def without_owner_refs(obj: Obj, uids: Sequence[str]) -> Obj | None:
    """``obj`` without the owner references naming any of ``uids``, or None if it has none of them."""
    refs = obj["metadata"].get("ownerReferences") or []
    kept = [ref for ref in refs if str(ref.get("uid") or "") not in uids]
    if len(kept) == len(refs):
        return None
    meta = dict(obj["metadata"])
    if kept:
        meta["ownerReferences"] = kept
    else:
        del meta["ownerReferences"]
    return {**obj, "metadata": meta}
