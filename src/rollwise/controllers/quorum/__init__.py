"""The quorum-aware update controller (etcd-druid DEP-07, seed 001) as a pure function: ``reconcile_quorum``.

Stateless and level-triggered: every call re-derives everything from the view (pod revision labels, container
statuses, Leases), so a template change mid-rollout, a controller restart and a switch from RollingUpdate to
OnDelete need no handover (seed 001 "The OnDelete Controller", "Transitioning Between Strategies").
"""

from __future__ import annotations

from rollwise.api.steps import canary_limit
from rollwise.controllers.plan import Blocked, Plan
from rollwise.controllers.quorum.members import Member, Roster, roster_of
from rollwise.controllers.quorum.report import (
    ALL_MEMBERS_UPDATED,
    DELETE_EVENT,
    INVALID_ANNOTATION_EVENT,
    OWNED_CONDITIONS,
    REQUEUE_SECONDS,
    WAITING_EVENT,
    invalid_plan,
    plan_for,
)
from rollwise.controllers.quorum.settings import (
    LEADER_VALUE,
    LEASE_TEMPLATE,
    MAX_UNAVAILABLE_MEMBERS,
    MEMBER_CONTAINER,
    QUORUM_AWARE_POLICY,
    ROLE_LABEL,
    UPDATE_POLICY,
    Settings,
    engaged,
    handed_to_quorum,
    read_settings,
)
from rollwise.controllers.quorum.steps import Decision, Deletion, TransferRequest, decide, within_canary
from rollwise.controllers.view import SetView

__all__ = [
    "ALL_MEMBERS_UPDATED",
    "DELETE_EVENT",
    "INVALID_ANNOTATION_EVENT",
    "LEADER_VALUE",
    "LEASE_TEMPLATE",
    "MAX_UNAVAILABLE_MEMBERS",
    "MEMBER_CONTAINER",
    "OWNED_CONDITIONS",
    "QUORUM_AWARE_POLICY",
    "REQUEUE_SECONDS",
    "ROLE_LABEL",
    "UPDATE_POLICY",
    "WAITING_EVENT",
    "Decision",
    "Deletion",
    "Member",
    "Roster",
    "Settings",
    "TransferRequest",
    "engaged",
    "handed_to_quorum",
    "reconcile_quorum",
]


def reconcile_quorum(view: SetView) -> Plan:
    """Delete at most one outdated member (or a quorum-safe batch of followers) in DEP-07's order, or wait.

    Inert (an empty Plan) unless the set is OnDelete, annotated QuorumAware, the gate is on and an update revision
    is known. Invalid annotations are reported and nothing is deleted, once there is something to update.
    """
    if not engaged(view):
        return Plan()
    settings, errors = read_settings(view.set)
    roster = roster_of(view, settings)
    if errors and roster.outdated:
        return invalid_plan(view, errors)
    decision = within_canary(decide(roster, settings), roster, canary_limit(view.set))
    if (decision.deletions or decision.requests) and (view.set.get("spec") or {}).get("paused") is True:
        # spec.paused (controllers/statefulset/pause.py): no new member is deleted; one already terminating goes on.
        decision = Decision(waits=(Blocked(pod="", cause=f"rollout paused: {len(roster.outdated)} members stay at "
                                                         f"their revision until spec.paused is false"),))
    return plan_for(view, roster, decision)
