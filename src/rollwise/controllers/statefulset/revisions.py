"""Choosing the current and update revisions, rollback reuse, collisions and history (reference §3.2-§3.4)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rollwise.api.memo import IdentityMemo
from rollwise.api.meta import Obj, name_of
from rollwise.api.revisions import (
    new_revision,
    revision_data,
    revision_number,
    revision_sort_key,
    revisions_equal,
)
from rollwise.controllers.plan import Action, CreateRevision, DeleteRevision, UpdateRevision

__all__ = ["choose_revisions", "prune_history"]


_UNCHANGED: IdentityMemo[tuple[Obj, Obj, int]] = IdentityMemo()
"""The outcome for a template its newest revision holds, keyed on the template and the revisions (api/memo.py):
comparing a template with every revision is a deep comparison, and the answer changes only with one of them."""


def choose_revisions(
    sts: Obj, owned: list[Obj], all_in_namespace: Iterable[Obj]
) -> tuple[Obj, Obj, int, list[Action]]:
    """``(current, update, collision_count, actions)`` for the set's live template (getStatefulSetRevisions).

    An unchanged template reuses the newest revision; a template equal to an older revision is a rollback and
    reuses that revision with the next ``.revision`` number (its name, and the pods at it, stay valid); anything
    else creates a revision, stepping the collision count while its name is taken by different data. The
    collision count never decreases.
    """
    status = sts.get("status") or {}
    cc = int(status.get("collisionCount") or 0)
    anchors = (sts["spec"]["template"], *owned)
    extra = (cc, status.get("currentRevision"))
    hit = _UNCHANGED.get(anchors, extra)
    if hit is not None:
        return (*hit, [])
    revisions = sorted(owned, key=revision_sort_key)
    next_number = (revision_number(revisions[-1]) + 1) if revisions else 1
    probe = {"data": revision_data(sts)}
    equal = [r for r in revisions if revisions_equal(r, probe)]
    actions: list[Action] = []
    unchanged = bool(equal) and revisions_equal(revisions[-1], equal[-1])
    if unchanged:
        update = revisions[-1]
    elif equal:
        update = {**equal[-1], "revision": next_number}
        actions.append(UpdateRevision(revision=update, reason=f"roll back to revision {name_of(update)}"))
    else:
        proposed = new_revision(sts, number=next_number, collision_count=cc)
        taken = {name_of(r): r for r in all_in_namespace}
        while name_of(proposed) in taken and not revisions_equal(taken[name_of(proposed)], proposed):
            cc += 1  # reference §3.2: a hash collision with different data steps the count
            proposed = new_revision(sts, number=next_number, collision_count=cc)
        update = proposed
        if name_of(proposed) not in taken:
            actions.append(CreateRevision(revision=proposed, reason="the pod template changed"))
    wanted = (sts.get("status") or {}).get("currentRevision")
    current = next((r for r in revisions if name_of(r) == wanted), update)
    if unchanged:  # the other outcomes write, or read the whole namespace's revisions
        _UNCHANGED.put(anchors, extra, (current, update, cc))
    return current, update, cc, actions


def prune_history(sts: Obj, owned: list[Obj], live: Callable[[], set[str]]) -> list[Action]:
    """Delete the oldest revisions beyond revisionHistoryLimit, never a live one (truncateHistory, §3.4).

    ``live()`` names the current and update revisions and every revision a pod still carries; it is asked only
    when the set owns more revisions than it keeps (most reconciles need not walk the pods for it). A negative
    limit keeps all.
    """
    limit = int(sts["spec"].get("revisionHistoryLimit", 10))
    if limit < 0 or len(owned) <= limit:
        return []
    kept = live()
    history = [r for r in sorted(owned, key=revision_sort_key) if name_of(r) not in kept]
    if len(history) <= limit:
        return []
    ns = sts["metadata"].get("namespace", "default")
    return [
        DeleteRevision(name=name_of(r), namespace=ns, reason=f"revisionHistoryLimit is {limit}")
        for r in history[: len(history) - limit]
    ]
