"""The quorum-aware companion for plain ``apps/v1`` sets, as the operator runs it (operator-plan §2, DEP-07): how
the ``QUORUM`` row of ``runtime/registrations.py`` decides in the operator for a kind whose StatefulSet controller the
operator never runs (its ``operator_decide``).

On a real cluster kube-controller-manager owns an ``apps/v1`` set's status: a second writer would fight it (each
write of ours is overwritten, each of its writes drops our condition). So the companion writes only pod deletes,
events and one annotation of its own on the set, ``rollwise.dev/quorum-status``, which holds the conditions the
pure controller owns (``AllMembersUpdated``), with RFC 3339 times and the rollout they speak of (its shape:
``cluster/quorum_status.py``, docs/quorum-status.md). Its memory (the message of the last wait, which keeps a long
hold to one event) is read back from that annotation, so the pure controller decides exactly as it does in the
simulator, where it shares the status.

A pure decision (view in, plan out, no I/O, no clock). It lives here rather than in ``controllers/`` because the
annotation's codec is the cluster's (``cluster/quorum_status.py``, which ``rollwise rollout status`` reads too), and
``controllers/`` does not import ``cluster/``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rollwise.api.meta import Obj
from rollwise.cluster.quorum_status import STATUS_ANNOTATION, QuorumStatus, encode, quorum_status_of
from rollwise.controllers.plan import Action, PatchSet, Plan, WriteStatus
from rollwise.controllers.quorum import OWNED_CONDITIONS, reconcile_quorum
from rollwise.controllers.view import SetView

__all__ = ["STATUS_ANNOTATION", "reconcile_companion"]



def _stored_conditions(sts: Obj) -> list[Obj]:
    # Unreadable (someone edited it by hand): start afresh, the next write replaces it.
    return quorum_status_of(sts, types=OWNED_CONDITIONS).conditions


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
            state = QuorumStatus(conditions=ours, update_revision=str(status.get("updateRevision") or "") or None,
                                 observed_generation=int(sts["metadata"].get("generation") or 0) or None)
            merge: dict[str, Any] = {"metadata": {"annotations": {STATUS_ANNOTATION: encode(state)}}}
            actions.append(PatchSet(merge=merge, reason=action.reason))
        else:
            actions.append(action)
    return dataclasses.replace(plan, actions=tuple(actions))
