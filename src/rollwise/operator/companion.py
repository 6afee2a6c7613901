"""The quorum-aware companion for plain ``apps/v1`` sets, as the operator runs it (operator-plan §2, DEP-07).

On a real cluster kube-controller-manager owns an ``apps/v1`` set's status: a second writer would fight it (each
write of ours is overwritten, each of its writes drops our condition). So the companion writes only pod deletes,
events and one annotation of its own on the set, ``rollwise.dev/quorum-status``, which holds the conditions the
pure controller owns (``AllMembersUpdated``). Its memory (the message of the last wait, which keeps a long hold to
one event) is read back from that annotation, so the pure controller decides exactly as it does in the simulator,
where it shares the status.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from rollwise.api.meta import Obj, annotations_of
from rollwise.controllers.plan import Action, PatchSet, Plan, WriteStatus
from rollwise.controllers.quorum import OWNED_CONDITIONS, reconcile_quorum
from rollwise.controllers.view import SetView

__all__ = ["STATUS_ANNOTATION", "reconcile_companion"]

STATUS_ANNOTATION = "rollwise.dev/quorum-status"


def _stored_conditions(sts: Obj) -> list[Obj]:
    try:
        stored = json.loads(annotations_of(sts).get(STATUS_ANNOTATION) or "[]")
    except ValueError:
        return []  # someone edited it by hand: start afresh, the next write replaces it
    if not isinstance(stored, list):
        return []
    return [c for c in stored if isinstance(c, dict) and c.get("type") in OWNED_CONDITIONS and "status" in c]


def reconcile_companion(view: SetView) -> Plan:
    sts = view.set
    status = sts.get("status") or {}
    theirs = [c for c in status.get("conditions") or [] if c.get("type") not in OWNED_CONDITIONS]
    # merge_conditions keeps conditions sorted by type; the same order here means "unchanged" compares equal.
    conditions = sorted([*theirs, *_stored_conditions(sts)], key=lambda c: str(c.get("type")))
    seen = {**sts, "status": {**status, "conditions": conditions}}
    plan = reconcile_quorum(dataclasses.replace(view, set=seen))
    if not any(isinstance(a, WriteStatus) for a in plan.actions):
        return plan
    actions: list[Action] = []
    for action in plan.actions:
        if isinstance(action, WriteStatus):
            ours = [c for c in action.status.get("conditions") or [] if c.get("type") in OWNED_CONDITIONS]
            merge: dict[str, Any] = {"metadata": {"annotations": {STATUS_ANNOTATION: json.dumps(ours,
                                                                                             sort_keys=True)}}}
            actions.append(PatchSet(merge=merge, reason=action.reason))
        else:
            actions.append(action)
    return dataclasses.replace(plan, actions=tuple(actions))
