"""Turning a decision into a Plan: deletions, events, the ``AllMembersUpdated`` condition and the wake-up.

Events that only restate a wait are emitted when the wait changes (the condition message is the memory), so a hold
that lasts minutes produces one event, not one per requeue.
"""

from __future__ import annotations

from rollwise.api.conditions import condition_of, merge_conditions
from rollwise.api.errors import FieldError
from rollwise.api.identity import revision_of
from rollwise.api.leader_transfer import REQUESTED_AT_ANNOTATION, TRANSFER_TO_ANNOTATION
from rollwise.api.meta import Obj, namespace_of, uid_of
from rollwise.controllers.plan import Action, AnnotatePod, Blocked, DeletePod, EmitEvent, Plan, WriteStatus
from rollwise.controllers.quorum.members import Roster
from rollwise.controllers.quorum.steps import Decision
from rollwise.controllers.view import SetView

__all__ = [
    "ALL_MEMBERS_UPDATED",
    "DELETE_EVENT",
    "INVALID_ANNOTATION_EVENT",
    "OWNED_CONDITIONS",
    "REQUEUE_SECONDS",
    "TRANSFER_EVENT",
    "TRANSFER_TIMED_OUT_EVENT",
    "WAITING_EVENT",
    "invalid_plan",
    "plan_for",
]

ALL_MEMBERS_UPDATED = "AllMembersUpdated"
OWNED_CONDITIONS = frozenset({ALL_MEMBERS_UPDATED})
DELETE_EVENT = "QuorumAwareDelete"
WAITING_EVENT = "QuorumAwareWaiting"
INVALID_ANNOTATION_EVENT = "InvalidAnnotation"
TRANSFER_EVENT = "LeaderTransferRequested"
TRANSFER_TIMED_OUT_EVENT = "LeaderTransferTimedOut"
IN_PROGRESS = "UpdateInProgress"

REQUEUE_SECONDS = 10.0
"""reference §1.2 ``requeueAfterInFlight``: a ceiling; every event on a member pod wakes the controller sooner."""


_AVAILABILITY_EPSILON = 1e-3


def _old_message(view: SetView) -> str | None:
    old = condition_of((view.set.get("status") or {}).get("conditions") or [], ALL_MEMBERS_UPDATED)
    return None if old is None else str(old.get("message", ""))


def _with_condition(view: SetView, wanted: Obj, actions: list[Action]) -> None:
    """Append a WriteStatus carrying the set's status with ``wanted`` merged, only when the conditions change."""
    old_status = view.set.get("status") or {}
    old = old_status.get("conditions") or []
    merged = merge_conditions(old, [wanted], now=view.now, owned=OWNED_CONDITIONS)
    if merged != old:
        actions.append(WriteStatus(status={**old_status, "conditions": merged},
                                   reason=f"{ALL_MEMBERS_UPDATED}: {wanted['message']}"))


def plan_for(view: SetView, roster: Roster, decision: Decision) -> Plan:
    """The Plan for a decision: explain-then-delete pairs, a waiting event when the wait changed, the condition."""
    actions: list[Action] = []
    message = decision.message
    if decision.done:
        message = f"every member is at revision {roster.update_revision}"
        wanted = {"type": ALL_MEMBERS_UPDATED, "status": "True", "reason": ALL_MEMBERS_UPDATED, "message": message}
        _with_condition(view, wanted, actions)
        return Plan(actions=tuple(actions))

    ns = namespace_of(view.set)
    for r in decision.requests:
        # The hook (rollwise.api.leader_transfer): the application's agent moves leadership when it sees it.
        actions.append(EmitEvent(event_reason=TRANSFER_EVENT, message=r.message, reason="step 4"))
        actions.append(AnnotatePod(name=r.member.name, namespace=ns, uid=uid_of(r.member.pod), reason=r.message,
                                   annotations=((TRANSFER_TO_ANNOTATION, r.target),
                                                (REQUESTED_AT_ANNOTATION, f"{view.now:.3f}"))))
    for d in decision.deletions:
        m = d.member
        if d.transfer_timed_out:
            actions.append(EmitEvent(event_type="Warning", event_reason=TRANSFER_TIMED_OUT_EVENT, message=d.message,
                                     reason="the hand-over did not happen in time"))
        actions.append(EmitEvent(event_reason=DELETE_EVENT, message=d.message, reason=f"step {d.step}"))
        # seed 001 "Pod Deletion Method": a plain DELETE, never an eviction; the PDB is bypassed by design.
        actions.append(DeletePod(name=m.name, namespace=ns, uid=uid_of(m.pod), revision=revision_of(m.pod),
                                 reason=d.message, unless_leader=d.unless_leader))
    if decision.waits and not decision.requests and message != _old_message(view):
        actions.append(EmitEvent(event_reason=WAITING_EVENT, message=message, reason="the wait changed"))
    wanted = {"type": ALL_MEMBERS_UPDATED, "status": "False", "reason": IN_PROGRESS, "message": message}
    _with_condition(view, wanted, actions)
    requeue = REQUEUE_SECONDS
    if decision.wake_at is not None:
        # Availability is strict (Ready for longer than minReadySeconds): look just after the instant it flips.
        requeue = min(requeue, max(decision.wake_at - view.now, 0.0) + _AVAILABILITY_EPSILON)
    return Plan(actions=tuple(actions), blocked=decision.waits, requeue_after=requeue)


def invalid_plan(view: SetView, errors: list[FieldError]) -> Plan:
    """Report invalid annotations once (Warning event, condition, Blocked) and delete nothing (DESIGN principle 5)."""
    message = "; ".join(str(e) for e in errors)
    actions: list[Action] = []
    if message != _old_message(view):
        actions.append(EmitEvent(event_type="Warning", event_reason=INVALID_ANNOTATION_EVENT, message=message,
                                 reason="an annotation of the quorum-aware controller is invalid"))
    wanted = {"type": ALL_MEMBERS_UPDATED, "status": "False", "reason": INVALID_ANNOTATION_EVENT, "message": message}
    _with_condition(view, wanted, actions)
    blocked = tuple(Blocked(pod="", cause=f"invalid annotation: {e}") for e in errors)
    return Plan(actions=tuple(actions), blocked=blocked)
