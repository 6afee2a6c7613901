"""The StatefulSet controller as a pure function: ``reconcile(view) -> Plan`` (reference §5).

The pipeline keeps upstream's order: adopt and release, choose revisions, create and repair in-range pods
(Phase A), fix condemned claims and scale down (B, C), the update strategy (D), status, history. A strategy may
hold back A-C (Recreate does, while old pods exist). A set that is being deleted or handed over only gets its
status recomputed; an invalid set gets a condition and an event, and no pod is touched.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Sequence

from rollwise.api import predicates as p
from rollwise.api.abort import Abort, abort_of
from rollwise.api.conditions import merge_conditions
from rollwise.api.errors import FieldError
from rollwise.api.handover import HANDOVER_ANNOTATION, handed_over_to, leaves_pods_alone
from rollwise.api.identity import ordinal_of, ordinal_range, revision_of
from rollwise.api.meta import Obj, deletion_timestamp, name_of
from rollwise.api.ordinals import index_in
from rollwise.api.reasons import says_complete
from rollwise.api.strategies import ENFORCED_ROLLING_UPDATE, effective_type
from rollwise.api.validation import structural_errors
from rollwise.controllers.census import (
    REQUEUE_EPSILON,
    Census,
    QuietContext,
    Slots,
    census_of,
    loud_census,
    quiet_context,
)
from rollwise.controllers.plan import Action, EmitEvent, Plan, WriteStatus
from rollwise.controllers.statefulset.abort import abort_fields, with_abort_condition
from rollwise.controllers.statefulset.analysis import runs_to_delete, runs_to_terminate
from rollwise.controllers.statefulset.claim_updates import ClaimReport, plan_claim_updates, with_claim_progress
from rollwise.controllers.statefulset.claims import keep_in_range_claims
from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.disruption import guard_for
from rollwise.controllers.statefulset.hooks import finish_pre_delete
from rollwise.controllers.statefulset.in_place import finish_in_place, in_place_only_halt
from rollwise.controllers.statefulset.ownership import claim_pods, claim_revisions
from rollwise.controllers.statefulset.pause import hold_while_paused, note_paused
from rollwise.controllers.statefulset.progress import progress_conditions
from rollwise.controllers.statefulset.readiness import (
    READY,
    is_custom_kind,
    ready_condition,
    with_generation,
    with_selector,
)
from rollwise.controllers.statefulset.replicas import process_condemned, process_replicas
from rollwise.controllers.statefulset.revisions import choose_revisions, prune_history
from rollwise.controllers.statefulset.status import compute_status, status_changed
from rollwise.controllers.statefulset.steps import advance_steps, failed_analysis, with_step_condition
from rollwise.controllers.statefulset.strategies import strategy_for
from rollwise.controllers.view import SetView

__all__ = ["OWNED_CONDITIONS", "reconcile"]

OWNED_CONDITIONS = frozenset({"Progressing", "Available", READY})
"""Condition types this controller owns; others (say, the quorum-aware controller's) are kept as they are."""


def reconcile(view: SetView, *, walk_all: bool = False) -> Plan:
    """The plan for the set in ``view``. ``walk_all``: let no pod count as quiet, so every phase walks every pod as
    upstream's controller does (the full computation the tests hold the census to; census.py)."""
    sts = view.set
    errors = structural_errors(sts)
    if errors:
        return _invalid(view, errors)

    owned_revisions, revision_adoption = claim_revisions(sts, view.revisions)
    current, update, cc, revision_actions = choose_revisions(sts, owned_revisions, view.revisions)
    old_status = sts.get("status") or {}
    # An aborted rollout's pods should run the stable revision: it is the target every phase reads (abort.py).
    abort = abort_of(old_status, name_of(update), name_of(current))
    failed = None if abort is not None else failed_analysis(sts, name_of(update), name_of(current),
                                                            view.analysis_runs)
    if failed is not None:  # the analysis step's run failed: the rollout aborts now (steps.py)
        abort = Abort(name_of(update), failed.abort_message())
    target = current if abort is not None else update
    ctx = quiet_context(sts, update_revision=name_of(target), current_revision=name_of(current))
    census = loud_census(ctx, view.pods) if walk_all else _census(view, ctx)
    pods, ownership = claim_pods(sts, census.others)
    if _collides(census, pods):
        census = loud_census(census.ctx, view.pods)
        pods, ownership = claim_pods(sts, census.others)
    sync = _build_sync(view, census, pods, current, target, cc)
    sync.revisions = {name_of(r): r for r in owned_revisions}
    sync.actions.extend(ownership)
    sync.actions.extend(revision_adoption)
    sync.actions.extend(revision_actions)
    claim_report: ClaimReport | None = None
    # Canary steps set the partition every later phase reads (steps.py), before any of them runs; an abort takes
    # every pod back, whatever step it stood at.
    steps = None if abort is not None else advance_steps(sync, view.analysis_runs,
                                                         moving=not sync.paused and not leaves_pods_alone(sts))
    if abort is not None:
        sync.floor = 0

    if not leaves_pods_alone(sts):
        # A set being deleted neither creates, updates nor deletes pods (reference §4.4, test DeletionTimestamp);
        # nor does one being handed over to the other StatefulSet resource (api/handover.py).
        strategy = strategy_for(sync.update_type)
        if abort is None:
            _announce_rollout(sync, old_status)
        sync.actions.extend(keep_in_range_claims(sync))
        finish_in_place(sync)
        finish_pre_delete(sync)  # before any step: a released pod goes, a timed-out hook halts new steps
        # InPlaceOnly: a pod that cannot be updated in place halts the rollout before the strategy touches any (a
        # paused set touches none anyway, and says it is paused).
        halt = not sync.paused and in_place_only_halt(sync)
        hold = not halt and (hold_while_paused(sync) if sync.paused else strategy.prepare(sync))
        stop = hold or process_replicas(sync) or process_condemned(sync)
        if not stop and not halt:
            if sync.paused:
                note_paused(sync)
            else:
                strategy.update(sync)
        claim_report = plan_claim_updates(sync, old_status)  # KEP-4650: no pod is touched
    elif deletion_timestamp(sts) is None:
        # The fence holds the set for as long as it stands, by hand or left by a migrate stopped half-way: say so.
        to = handed_over_to(sts) or "another controller"
        sync.wait(None, f"handed over to {to} (annotation {HANDOVER_ANNOTATION}): no pod is created, deleted or "
                        "adopted until the annotation is removed")

    status = compute_status(sync, [])
    if claim_report is not None:
        status["volumeClaimTemplates"] = claim_report.entries
    if steps is not None:
        steps = steps.settled(status)
        status.update(steps.fields(str(status["currentRevision"])))
        # A failed analysis aborts from here on; this reconcile acted at the step's partition, the next one takes
        # the pods back (it reads the abort from the status written now).
        abort = abort or steps.abort
    if abort is not None:
        status.update(abort_fields(abort, status, old_status))
    if view.analysis_runs and not leaves_pods_alone(sts):
        keep = steps.run.name if steps is not None and steps.run is not None and abort is None else None
        sync.actions.extend(runs_to_terminate(view.analysis_runs, sts, keep))
        sync.actions.extend(runs_to_delete(view.analysis_runs, sts, keep))
    if failed is not None:
        status["currentStepAnalysisRun"] = failed.status_field()
    wanted = with_claim_progress(progress_conditions(sync, status, old_status), claim_report)
    wanted = with_abort_condition(sync, abort, with_step_condition(steps, wanted, paused=sync.paused))
    if is_custom_kind(sts):
        status = with_selector(sts, status)
        basis = sync.unpaused_progressing if abort is None and _done(sync.unpaused_progressing) else wanted[0]
        wanted = with_generation(sts, [*wanted, ready_condition(basis or wanted[0], status)])
    conditions = merge_conditions(old_status.get("conditions") or [], wanted, now=view.now, owned=OWNED_CONDITIONS)
    if conditions:
        status["conditions"] = conditions
    _report_metrics(sync, status, old_status)
    sync.actions.extend(sync.progress_events)
    if status_changed(old_status, status):
        sync.actions.append(WriteStatus(status=status, reason="status changed"))

    sync.actions.extend(prune_history(
        sts, owned_revisions, lambda: {name_of(current), name_of(update)} | {revision_of(pod) for pod in pods}))
    return Plan(actions=tuple(sync.actions), blocked=tuple(sync.blocked), requeue_after=_requeue(sync),
                metrics=tuple(sync.metrics))


_COPY_SLOTS_UP_TO = 2048
"""Up to this many ordinals a reconcile copies the census' slots into a plain list (a copy costs a few ns per slot,
an overlaid read a few hundred); above it, the overlay saves the copy, unless many slots are loud."""
_SLOTS_PER_LOUD_FOR_A_COPY = 64
"""Above ``_COPY_SLOTS_UP_TO``, a Parallel set whose loud slots are at least this fraction of the range copies all
the same: its phases read every loud slot a few times, so a wave of a large rollout (a tenth of the set loud) reads
far more than the copy costs. An OrderedReady set stops at its first missing or unhealthy ordinal and reads a
handful, however many are loud (all of them, while it is first created)."""


def _done(progressing: Obj | None) -> bool:
    return progressing is not None and says_complete(progressing.get("status"), progressing.get("reason"))


def _census(view: SetView, ctx: QuietContext) -> Census:
    """The view's census when the driver kept one for this very context, else one taken over the view's pods."""
    given = view.census
    if given is not None and (given.ctx is ctx or given.ctx == ctx):
        return given
    return census_of(ctx, view.set, view.pods, view.claims, view.now)


def _collides(census: Census, owned: list[Obj]) -> bool:
    """A pod the ownership phase kept claims the ordinal of a quiet pod (a non-canonical name such as ``web-03``):
    which of the two a slot holds then depends on the view's order, so the phases walk everything."""
    span, slots = census.ctx.span, census.slots
    return any(0 <= (i := index_in(span, ordinal_of(pod))) < len(slots) and slots[i] is not None for pod in owned)


def _build_sync(view: SetView, census: Census, pods: list[Obj], current: Obj, update: Obj, cc: int) -> Sync:
    """Quiet pods sit in their slots already; the pods the ownership phase kept are placed by ordinal."""
    sts = view.set
    span = ordinal_range(sts)
    placed: dict[int, Obj] = {}
    condemned: list[Obj] = []
    for pod in pods:
        ordinal = ordinal_of(pod)
        index = index_in(span, ordinal)
        if index >= 0:
            placed[index] = pod
        elif ordinal >= 0:  # above the range, or at a reserved ordinal: scaled in (reference §5.3)
            condemned.append(pod)
    condemned.sort(key=ordinal_of, reverse=True)
    replicas: Sequence[Obj | None]
    slots = len(census.slots)
    parallel = sts["spec"].get("podManagementPolicy") == "Parallel"
    if slots <= _COPY_SLOTS_UP_TO or (parallel and len(census.loud) * _SLOTS_PER_LOUD_FOR_A_COPY >= slots):
        replicas = list(census.slots)
        for index, pod in placed.items():
            replicas[index] = pod
    else:
        replicas = Slots(census.slots, placed)
    return Sync(sts=sts, now=view.now, gates=view.gates, span=span, replicas=replicas, condemned=condemned,
                current_revision=current, update_revision=update, collision_count=cc, claims=ChainMap({}, view.claims),  # type: ignore[arg-type]
                census=census, present=sorted(placed), update_type=effective_type(sts, view.gates),
                guard=guard_for(sts, view.budgets, view.budget_pods, view.budget_scales))


def _announce_rollout(sync: Sync, old_status: dict[str, object]) -> None:
    """seed 003: ``EnforcedRollingUpdateStarted`` when a new revision starts rolling under EnforcedRollingUpdate."""
    previous = old_status.get("updateRevision")
    if sync.update_type != ENFORCED_ROLLING_UPDATE or not previous or previous == sync.update_name:
        return
    in_range = (sync.replicas[i] for i in sync.present)
    if sync.census.quiet_outdated or any(pod is not None and sync.outdated(pod) for pod in in_range):
        sync.event("EnforcedRollingUpdateStarted", f"Enforced rolling update to revision {sync.update_name} started")
        sync.metric("statefulset_enforced_rolling_updates_total", 1, kind="counter")


def _report_metrics(sync: Sync, status: Obj, old_status: dict[str, object]) -> None:
    """KEP-961's gauges, and the count of times unavailability went over the budget."""
    replicas = int(sync.spec.get("replicas", 1))
    budget = sync.budget
    unavailable = sync.unavailable_count()
    if sync.gates.max_unavailable:
        sync.metric("statefulset_max_unavailable", budget)
        sync.metric("statefulset_unavailable_replicas", unavailable)
    was = bool(old_status) and replicas - int(str(old_status.get("availableReplicas") or 0)) > budget
    now_violating = replicas - int(status.get("availableReplicas") or 0) > budget
    if now_violating and not was and old_status.get("observedGeneration"):
        sync.metric("statefulset_unavailability_violation", 1, kind="counter")


def _requeue(sync: Sync) -> float | None:
    """When time alone changes something: the next instant a Ready pod becomes available (reference §5.1 step 6),
    a pod progress timeout, or a progress deadline."""
    mrs = sync.min_ready_seconds
    times = list(sync.wake_times)
    if mrs > 0:
        times += [
            at + REQUEUE_EPSILON
            for pod in sync.loud_pods()  # a quiet pod's instant is behind it (census.py)
            if (at := p.available_at(pod, mrs)) is not None and at + REQUEUE_EPSILON > sync.now
        ]
    times = [t for t in times if t > sync.now]
    if not times:
        return None
    return min(times) - sync.now


def _invalid(view: SetView, errors: list[FieldError]) -> Plan:
    """Report and touch nothing: a condition on the set and one Warning event (DESIGN principle 5)."""
    message = "; ".join(str(e) for e in errors)
    old_status = view.set.get("status") or {}
    invalid = [{"type": "Progressing", "status": "False", "reason": "InvalidSpec", "message": message}]
    if is_custom_kind(view.set):
        invalid = with_generation(view.set, [*invalid, {"type": READY, "status": "False", "reason": "InvalidSpec",
                                                        "message": message}])
    conditions = merge_conditions(old_status.get("conditions") or [], invalid, now=view.now, owned=OWNED_CONDITIONS)
    status = {**old_status, "observedGeneration": int(view.set["metadata"].get("generation", 1)),
              "conditions": conditions}
    actions: list[Action] = []
    if status_changed(old_status, status):
        actions.append(EmitEvent(event_type="Warning", event_reason="InvalidSpec", message=message,
                                 reason="the StatefulSet spec is invalid"))
        actions.append(WriteStatus(status=status, reason="record the invalid spec"))
    return Plan(actions=tuple(actions), blocked=(), requeue_after=None)
