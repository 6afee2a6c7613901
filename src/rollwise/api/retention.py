"""PVC retention through owner references, and stale claims (reference §6.2, §6.3; KEP-1847).

The controller never deletes a claim itself: it sets controller owner references and lets the garbage collector
act. These functions decide which references a claim should carry, and repair them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.meta import Obj, name_of, owner_reference, uid_of
from rollwise.api.values import clone

__all__ = [
    "claim_is_stale",
    "claim_owners_up_to_date",
    "needed_claim_owners",
    "owned_by",
    "retention_policy",
    "with_claim_owners",
]


def retention_policy(sts: Mapping[str, Any]) -> tuple[str, str]:
    """``(whenScaled, whenDeleted)``; a missing policy is Retain/Retain."""
    p = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
    return p.get("whenScaled") or "Retain", p.get("whenDeleted") or "Retain"


def needed_claim_owners(sts: Mapping[str, Any], *, condemned: bool) -> tuple[bool, bool]:
    """``(set_ref, pod_ref)`` the claim should carry (reference §6.2 table).

    A condemned pod's claim under whenScaled=Delete belongs to the pod only, so deleting the pod removes it; any
    other claim belongs to the set when whenDeleted=Delete, so deleting the set removes it.
    """
    when_scaled, when_deleted = retention_policy(sts)
    pod_ref = when_scaled == "Delete" and condemned
    set_ref = when_deleted == "Delete" and not pod_ref
    return set_ref, pod_ref


def _refs(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(claim.get("metadata", {}).get("ownerReferences") or ())


def _names(ref: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    return ref.get("kind") == owner.get("kind") and ref.get("name") == name_of(owner)


def owned_by(claim: Mapping[str, Any], owner: Mapping[str, Any] | None) -> bool:
    return owner is not None and bool(uid_of(owner)) and any(r.get("uid") == uid_of(owner) for r in _refs(claim))


def _stale_ref(claim: Mapping[str, Any], owner: Mapping[str, Any] | None) -> bool:
    """A reference by our name and kind but another uid: an earlier incarnation owned the claim."""
    if owner is None or not uid_of(owner):
        return False
    return any(_names(r, owner) and r.get("uid") and r.get("uid") != uid_of(owner) for r in _refs(claim))


def _unexpected_controller(claim: Mapping[str, Any], sts: Mapping[str, Any], pod: Mapping[str, Any] | None) -> bool:
    """Someone other than our set or pod controls the claim (never with Retain/Retain, reference §8.7 item 54)."""
    if retention_policy(sts) == ("Retain", "Retain"):
        return False
    for r in _refs(claim):
        if not r.get("controller"):
            continue
        ours = (_names(r, sts) and r.get("uid") == uid_of(sts)) or (
            pod is not None and _names(r, pod) and r.get("uid") == uid_of(pod)
        )
        if not ours:
            return True
    return False


def claim_owners_up_to_date(
    claim: Mapping[str, Any], sts: Mapping[str, Any], pod: Mapping[str, Any] | None, *, condemned: bool
) -> bool:
    """Whether the claim's owner references already match the retention policy (reference §6.2 special cases)."""
    if _stale_ref(claim, sts) or _stale_ref(claim, pod):
        return True  # leave it to the garbage collector
    if _unexpected_controller(claim, sts, pod):
        return not (owned_by(claim, sts) or owned_by(claim, pod))
    for r in _refs(claim):
        ours = r.get("uid") in (uid_of(sts), uid_of(pod) if pod else None)
        if ours and not r.get("controller"):
            return False
    set_ref, pod_ref = needed_claim_owners(sts, condemned=condemned)
    return owned_by(claim, sts) == set_ref and owned_by(claim, pod) == pod_ref


def with_claim_owners(
    claim: Mapping[str, Any], sts: Mapping[str, Any], pod: Mapping[str, Any] | None, *, condemned: bool
) -> Obj:
    """A copy of the claim with references to our set and pod scrubbed and the needed controller refs added.

    Other owners survive; a reference without a uid is dropped; with an unexpected controller present, nothing of
    ours is added (reference §8.7 items 52-53).
    """
    fixed: Obj = clone(claim)
    ours = [sts] + ([pod] if pod is not None else [])
    kept = [
        r
        for r in _refs(claim)
        if r.get("uid") and not any(_names(r, o) for o in ours) and r.get("uid") not in {uid_of(o) for o in ours}
    ]
    fixed.setdefault("metadata", {})["ownerReferences"] = kept
    if not _unexpected_controller(fixed, sts, pod):
        set_ref, pod_ref = needed_claim_owners(sts, condemned=condemned)
        if set_ref:
            kept.append(owner_reference(sts))
        if pod_ref and pod is not None and uid_of(pod):
            kept.append(owner_reference(pod))
    if not kept:
        fixed["metadata"].pop("ownerReferences", None)
    return fixed


def claim_is_stale(claim: Mapping[str, Any], sts: Mapping[str, Any], pod_name: str, pod_uid: str = "") -> bool:
    """Under whenScaled=Delete, a claim still owned by an earlier pod of that name must be collected first.

    reference §6.3 (PodClaimIsStale): a pod not yet created has no uid, so any Pod reference by its name is stale;
    creating the pod now would reattach a claim the garbage collector is about to delete.
    """
    if retention_policy(sts)[0] != "Delete":
        return False
    return any(
        r.get("kind") == "Pod" and r.get("name") == pod_name and r.get("uid") != pod_uid for r in _refs(claim)
    )
