"""Which pods and revisions the set owns: adoption and release (reference §3.3, §4.4)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rollwise.api.handover import leaves_pods_alone
from rollwise.api.identity import is_member_of
from rollwise.api.memo import IdentityMemo
from rollwise.api.meta import Obj, controller_of, labels, name_of, owner_reference, uid_of
from rollwise.api.meta import selector_matches as matches
from rollwise.api.predicates import is_terminating
from rollwise.controllers.plan import Action, PatchOwner

__all__ = ["claim_pods", "claim_revisions"]


def _with_ref(obj: Obj, ref: dict[str, object] | None, *, drop_uid: str = "") -> list[dict[str, object]]:
    refs = [dict(r) for r in obj.get("metadata", {}).get("ownerReferences") or () if r.get("uid") != drop_uid]
    if ref is not None:
        refs.append(ref)
    return refs


def claim_pods(sts: Obj, candidates: Iterable[Obj]) -> tuple[list[Obj], list[Action]]:
    """The set's pods after adoption and release, and the patches that adopt or release (ClaimPods + isMemberOf).

    Owned pods that no longer match the selector or the set's name are released; orphans that match, are members
    and are not terminating are adopted, unless the set itself is being deleted or handed over; a pod another
    controller owns is never touched (controller_ref_manager.go).
    """
    selector = sts["spec"].get("selector")
    set_uid = uid_of(sts)
    deleting = leaves_pods_alone(sts)  # being deleted or handed over (api/handover.py)
    owned: list[Obj] = []
    actions: list[Action] = []
    for pod in candidates:
        ref = controller_of(pod)
        fits = matches(selector, labels(pod)) and is_member_of(sts, pod)
        if ref is not None and ref.get("uid") == set_uid:
            if fits:
                owned.append(pod)
            else:
                actions.append(_patch("Pod", pod, _with_ref(pod, None, drop_uid=set_uid),
                                      f"release {name_of(pod)}: it no longer matches the selector or name"))
        elif ref is None and fits and not deleting and not is_terminating(pod):
            refs = _with_ref(pod, owner_reference(sts))
            actions.append(_patch("Pod", pod, refs, f"adopt orphan pod {name_of(pod)}", adopt=True))
            adopted = {**pod, "metadata": {**pod["metadata"], "ownerReferences": refs}}
            owned.append(adopted)
    return owned, actions


_OWNED_REVISIONS: IdentityMemo[tuple[Obj, ...]] = IdentityMemo()
"""The revisions a set owns when it adopts none, keyed on its spec and the revisions (api/memo.py): the answer
changes only with one of them, and a set is reconciled on every pod event."""


def claim_revisions(sts: Obj, revisions: Sequence[Obj]) -> tuple[list[Obj], list[Action]]:
    """The set's revisions; orphans matching the selector are adopted (never released; reference §3.3)."""
    set_uid = uid_of(sts)
    deleting = leaves_pods_alone(sts)  # being deleted or handed over (api/handover.py)
    anchors, extra = (sts["spec"], *revisions), (set_uid, deleting)
    hit = _OWNED_REVISIONS.get(anchors, extra)
    if hit is not None:
        return list(hit), []
    owned, actions = _claim_revisions(sts, revisions, set_uid=set_uid, deleting=deleting)
    if not actions:
        _OWNED_REVISIONS.put(anchors, extra, tuple(owned))
    return owned, actions


def _claim_revisions(sts: Obj, revisions: Iterable[Obj], *, set_uid: str,
                     deleting: bool) -> tuple[list[Obj], list[Action]]:
    selector = sts["spec"].get("selector")
    owned: list[Obj] = []
    actions: list[Action] = []
    for rev in revisions:
        if not matches(selector, labels(rev)):
            continue
        ref = controller_of(rev)
        if ref is not None and ref.get("uid") == set_uid:
            owned.append(rev)
        elif ref is None and not deleting:
            refs = _with_ref(rev, owner_reference(sts))
            actions.append(_patch("ControllerRevision", rev, refs, f"adopt orphan revision {name_of(rev)}",
                                  adopt=True))
            owned.append({**rev, "metadata": {**rev["metadata"], "ownerReferences": refs}})
    return owned, actions


def _patch(kind: str, obj: Obj, refs: list[dict[str, object]], reason: str, *, adopt: bool = False) -> PatchOwner:
    meta = obj["metadata"]
    return PatchOwner(kind=kind, name=meta["name"], namespace=meta.get("namespace", "default"),
                      owner_references=refs, reason=reason, uid=uid_of(obj),
                      resource_version=str(meta.get("resourceVersion") or ""), adopt=adopt)
