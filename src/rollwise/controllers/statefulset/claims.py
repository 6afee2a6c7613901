"""Claims for a pod: creating the missing ones, and keeping owner references in line with the retention policy."""

from __future__ import annotations

from rollwise.api.identity import claim_names_for_pod, claims_for_pod, ordinal_of
from rollwise.api.meta import Obj, name_of, uid_of
from rollwise.api.predicates import is_terminating
from rollwise.api.retention import claim_is_stale, claim_owners_up_to_date, owned_by, with_claim_owners
from rollwise.controllers.plan import Action, CreateClaim, UpdateClaim
from rollwise.controllers.statefulset.context import Sync

__all__ = [
    "claims_blocking_creation",
    "create_missing_claims",
    "fix_claim_owners",
    "keep_in_range_claims",
    "stale_claim",
]


def stale_claim(sync: Sync, ordinal: int, pod_name: str) -> str | None:
    """The name of a claim still owned by an earlier pod of this name (reference §6.3), or None."""
    for name in claim_names_for_pod(sync.sts, ordinal):
        existing = sync.claims.get(name)
        if existing is not None and claim_is_stale(existing, sync.sts, pod_name):
            return name
    return None


def claims_blocking_creation(sync: Sync, ordinal: int) -> str | None:
    """Why the pod's claims stop its creation (a claim being deleted), or None (CreateStatefulPod step 1)."""
    for name in claim_names_for_pod(sync.sts, ordinal):
        existing = sync.claims.get(name)
        if existing is not None and is_terminating(existing):
            return f"pvc {name} is being deleted"
    return None


def create_missing_claims(sync: Sync, ordinal: int, pod_name: str) -> list[Action]:
    """Create the claims the pod needs that do not exist, already carrying the set reference the policy wants.

    Upstream creates the claim bare and patches owner references after the pod; setting the set reference at
    creation gives the same end state with one write less (a pod reference can only follow the pod's uid).
    """
    actions: list[Action] = []
    for claim in claims_for_pod(sync.sts, ordinal):
        if name_of(claim) in sync.claims:
            continue
        owned = with_claim_owners(claim, sync.sts, None, condemned=False)
        sync.claims[name_of(claim)] = owned
        actions.append(CreateClaim(claim=owned, pod_name=pod_name, reason=f"pod {pod_name} needs it"))
    return actions


def fix_claim_owners(sync: Sync, pod: Obj, *, condemned: bool) -> list[Action]:
    """Owner-reference updates for the pod's existing claims that do not match the policy (reference §6.2)."""
    actions: list[Action] = []
    if not uid_of(pod):
        return actions
    for name in claim_names_for_pod(sync.sts, ordinal_of(pod)):
        existing = sync.claims.get(name)
        if existing is None or claim_owners_up_to_date(existing, sync.sts, pod, condemned=condemned):
            continue
        fixed = with_claim_owners(existing, sync.sts, pod, condemned=condemned)
        sync.claims[name] = fixed
        why = "condemned" if condemned else "in range"
        actions.append(UpdateClaim(claim=fixed, reason=f"retention policy for {why} pod {name_of(pod)}",
                                   adopt=owned_by(fixed, sync.sts) and not owned_by(existing, sync.sts)))
    return actions


def keep_in_range_claims(sync: Sync) -> list[Action]:
    """Owner-reference repairs for the claims of every in-range pod, whatever the pod's state.

    A claim whose pod was condemned under whenScaled=Delete carries a controller reference to that pod, so the
    garbage collector deletes it with the pod. If the ordinal comes back into range while the pod is still
    terminating (a scale-down reversed), that reference must go *before* the pod is gone, or the claim of an
    in-range ordinal is lost. Upstream repairs it in processReplica step 7, which an OrderedReady set never reaches
    for a terminating or unhealthy pod (reference §5.4, §6.2): so this runs for every in-range pod, ahead of the
    phases that may stop the reconcile.
    """
    actions: list[Action] = []
    if not sync.spec.get("volumeClaimTemplates"):
        return actions  # no claims to keep in line
    for index in sync.pod_indexes():  # a quiet pod's claims are in line already (census.py)
        pod = sync.replicas[index]
        if pod is not None:
            actions.extend(fix_claim_owners(sync, pod, condemned=False))
    return actions

