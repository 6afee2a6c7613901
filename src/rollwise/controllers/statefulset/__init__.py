"""The StatefulSet controller as a pure function: ``reconcile(view) -> Plan`` (reference §5).

The pipeline keeps upstream's order: adopt and release, choose revisions, create and repair in-range pods
(Phase A), fix condemned claims and scale down (B, C), the update strategy (D), status, history. A set that is
being deleted only gets its status recomputed; an invalid set gets a condition and an event, and no pod is
touched.
"""

from __future__ import annotations

from rollwise.api import predicates as p
from rollwise.api.conditions import merge_conditions
from rollwise.api.errors import FieldError
from rollwise.api.identity import ordinal_of, ordinal_range, revision_of
from rollwise.api.meta import Obj, deletion_timestamp, name_of
from rollwise.api.validation import validate_statefulset
from rollwise.controllers.plan import Action, EmitEvent, Plan, WriteStatus
from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.ownership import claim_pods, claim_revisions
from rollwise.controllers.statefulset.replicas import process_condemned, process_replicas
from rollwise.controllers.statefulset.revisions import choose_revisions, prune_history
from rollwise.controllers.statefulset.status import compute_status, status_changed
from rollwise.controllers.statefulset.strategies import strategy_for
from rollwise.controllers.view import SetView

__all__ = ["reconcile"]

OWNED_CONDITIONS = frozenset({"Progressing", "Available"})
"""Condition types this controller owns; others (say, the quorum-aware controller's) are kept as they are."""

_REQUEUE_EPSILON = 1e-3
"""Availability is strict (Ready for *longer than* minReadySeconds), so look just after the instant it flips."""


def reconcile(view: SetView) -> Plan:
    sts = view.set
    errors = validate_statefulset(sts, gates=view.gates)
    if errors:
        return _invalid(view, errors)

    pods, ownership = claim_pods(sts, view.pods)
    owned_revisions, revision_adoption = claim_revisions(sts, view.revisions)
    current, update, cc, revision_actions = choose_revisions(sts, owned_revisions, view.revisions)
    sync = _build_sync(view, pods, current, update, cc)
    sync.actions.extend(ownership)
    sync.actions.extend(revision_adoption)
    sync.actions.extend(revision_actions)

    if deletion_timestamp(sts) is None:
        # A set being deleted neither creates, updates nor deletes pods (reference §4.4, test DeletionTimestamp).
        stop = process_replicas(sync) or process_condemned(sync)
        if not stop:
            update_type = (sts["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate")
            strategy_for(update_type, view.gates).update(sync)

    old_status = sts.get("status") or {}
    conditions = merge_conditions(old_status.get("conditions") or [], [], now=view.now, owned=OWNED_CONDITIONS)
    status = compute_status(sync, conditions)
    if status_changed(old_status, status):
        sync.actions.append(WriteStatus(status=status, reason="status changed"))

    live = {name_of(current), name_of(update)} | {revision_of(pod) for pod in pods}
    sync.actions.extend(prune_history(sts, owned_revisions, live))
    return Plan(actions=tuple(sync.actions), blocked=tuple(sync.blocked), requeue_after=_requeue(sync))


def _build_sync(view: SetView, pods: list[Obj], current: Obj, update: Obj, cc: int) -> Sync:
    sts = view.set
    span = ordinal_range(sts)
    replicas: list[Obj | None] = [None] * len(span)
    condemned: list[Obj] = []
    for pod in pods:
        ordinal = ordinal_of(pod)
        if ordinal in span:
            replicas[ordinal - span.start] = pod
        elif ordinal >= 0:
            condemned.append(pod)
    condemned.sort(key=ordinal_of, reverse=True)
    return Sync(sts=sts, now=view.now, gates=view.gates, start=span.start, replicas=replicas, condemned=condemned,
                current_revision=current, update_revision=update, collision_count=cc, claims=dict(view.claims))


def _requeue(sync: Sync) -> float | None:
    """When time alone changes something: the next instant a Ready pod becomes available (reference §5.1 step 6)."""
    mrs = sync.min_ready_seconds
    if mrs <= 0:
        return None
    times = [
        at
        for pod in sync.pods()
        if (at := p.available_at(pod, mrs)) is not None and at + _REQUEUE_EPSILON > sync.now
    ]
    if not times:
        return None
    return max(min(times) + _REQUEUE_EPSILON - sync.now, 0.0)


def _invalid(view: SetView, errors: list[FieldError]) -> Plan:
    """Report and touch nothing: a condition on the set and one Warning event (DESIGN principle 5)."""
    message = "; ".join(str(e) for e in errors)
    old_status = view.set.get("status") or {}
    invalid = [{"type": "Progressing", "status": "False", "reason": "InvalidSpec", "message": message}]
    conditions = merge_conditions(old_status.get("conditions") or [], invalid, now=view.now, owned=OWNED_CONDITIONS)
    status = {**old_status, "observedGeneration": int(view.set["metadata"].get("generation", 1)),
              "conditions": conditions}
    actions: list[Action] = []
    if status_changed(old_status, status):
        actions.append(EmitEvent(event_type="Warning", event_reason="InvalidSpec", message=message,
                                 reason="the StatefulSet spec is invalid"))
        actions.append(WriteStatus(status=status, reason="record the invalid spec"))
    return Plan(actions=tuple(actions), blocked=(), requeue_after=None)
