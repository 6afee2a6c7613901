"""The rules a controller's decision must keep, one function each: take a ``Decision``, return what is wrong in
words (empty: it holds). ``TRANSITION_RULES`` names them; the store-level rules are in ``store``.

- budget: the StatefulSet controller's own deletions never leave more in-range ordinals unavailable than the
  budget it promises (KEP-961 maxUnavailable, resolved as ``Sync`` resolves it; 0 under OnDelete; none under
  Recreate, nor with the gate off, where upstream's legacy one-at-a-time algorithm promises none);
- quorum: the quorum-aware controller never takes a cluster that has quorum below it, unless it has no headroom
  at all (1 or 2 members, DEP-07);
- quorum-rejoin: nor deletes a participating member while a member at the update revision does not participate
  (DEP-07: wait for an updated member to rejoin before the next);
- partition: a pod below the partition is deleted only when it failed or succeeded;
- no-churn: never a healthy in-range pod deleted by the controller that created it under the same template and
  partition (a pod it has just created must not be replaced for nothing);
- futile-delete: without a rollingUpdate block, never a pod deleted that would come back at its own revision;
- ordered-creation: under OrderedReady, ordinal k is created only when every in-range ordinal below it is
  Running, Ready and available, one create a reconcile;
- recreate: under Recreate, no pod created while a pod of another revision exists, terminating ones included
  (seed 000);
- status-bounds: status counters stay within the API server's rules (reference §1.2);
- one-pod-per-ordinal: never a pod created at an ordinal the set still holds a pod at;
- wanted-ordinal: never a pod created at an ordinal the set does not want (above the range, or reserved by
  ``spec.reserveOrdinals``), by the one function that says which it wants (``api.identity.ordinal_range``);
- disruption-budget: no voluntary deletion past the allowance of a PodDisruptionBudget selecting the pod
  (``disruption``).
- in-place-restart: a pod is never counted available while its containers restart for an in-place update
  (``in_place``); the budget rule counts in-place updates as it counts deletions.
- pre-delete-hook: no voluntary deletion of a pod that still carries its set's pre-delete hook (``hooks``).
- canary-step: a canary moves past ``pause: {}`` or an analysis step only by a promote, past a timed pause only
  once it has run out (``steps``); its deletions keep the step's partition (the partition rule reads it).
- quiescence: no write equal to the object it replaces (``quiescence``; its other form, a second reconcile of an
  unchanged world writes nothing, needs two decisions and is judged where two are at hand).
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api import predicates as p
from rollwise.api.identity import ordinal_of, ordinal_range, revision_of
from rollwise.api.meta import Obj, name_of
from rollwise.api.ordinals import OrdinalSpan, position_in
from rollwise.api.strategies import BLOCK_KEYS, ON_DELETE, RECREATE, ROLLING_KINDS
from rollwise.controllers.plan import WriteStatus
from rollwise.invariants.decision import Decision, birth
from rollwise.invariants.disruption import disruption_budget
from rollwise.invariants.hooks import pre_delete_hook_held
from rollwise.invariants.in_place import in_place_restart
from rollwise.invariants.quiescence import noop_writes
from rollwise.invariants.stages import stage_of
from rollwise.invariants.steps import canary_step

__all__ = [
    "TRANSITION_RULES",
    "budget",
    "canary_step",
    "disruption_budget",
    "futile_delete",
    "judge",
    "no_churn",
    "one_pod_per_ordinal",
    "ordered_creation",
    "partition",
    "pre_delete_hook_held",
    "promised_budget",
    "quorum",
    "quorum_rejoin",
    "recreate",
    "status_bounds",
    "wanted_ordinal",
]


def promised_budget(d: Decision) -> int | None:
    """Unavailable ordinals the StatefulSet controller may cause (None: it promises no bound)."""
    limits = d.limits
    if limits.update_type == RECREATE:
        return None
    if limits.update_type == ON_DELETE:
        return 0
    if not d.state.gates.max_unavailable:
        return None
    return limits.budget


def _participating(d: Decision, pods: list[Obj]) -> list[Obj]:
    span = d.span
    return [pod for pod in pods if ordinal_of(pod) in span and p.is_ready(pod) and not p.is_terminating(pod)]


def budget(d: Decision) -> list[str]:
    if d.quorum:
        return []
    mrs, now, span = d.min_ready_seconds, d.state.now, d.span
    taken = [pod for pod in (*d.deleted(), *d.updated_in_place())
             if ordinal_of(pod) in span and p.is_available(pod, mrs, now)]
    if not taken:
        return []
    allowed = promised_budget(d)
    if allowed is None:
        return []
    by_ordinal = d.by_ordinal()
    gone = {ordinal_of(pod) for pod in taken}
    down = [o for o in span if o in gone or p.is_unavailable(by_ordinal.get(o), mrs, now)]
    if len(down) > allowed:
        names = ", ".join(name_of(pod) for pod in taken)
        return [f"deleted available pod(s) {names}: ordinals {down} now unavailable, budget {allowed}"]
    return []


def quorum(d: Decision) -> list[str]:
    if not d.quorum:
        return []
    mrs, now, span = d.min_ready_seconds, d.state.now, d.span
    deleted = d.deleted()
    taken = [pod for pod in deleted if ordinal_of(pod) in span and p.is_available(pod, mrs, now)]
    if not taken:
        return []
    size = len(span) // 2 + 1
    gone = {name_of(pod) for pod in deleted}
    had = len(_participating(d, list(d.state.pods)))
    left = len([pod for pod in _participating(d, list(d.state.pods)) if name_of(pod) not in gone])
    # DEP-07: a set with no headroom (1 or 2 members) takes its one deletion anyway, or it could never update.
    if had >= size > left and len(span) > size:
        names = ", ".join(name_of(pod) for pod in taken)
        return [f"deleted participating member(s) {names}: {left} of {had} left, quorum is {size}"]
    return []


def quorum_rejoin(d: Decision) -> list[str]:
    if not d.quorum:
        return []
    update = (d.state.set.get("status") or {}).get("updateRevision")
    span = d.span
    taken = _participating(d, d.deleted())
    if not taken or not update:
        return []
    away = [name_of(pod) for pod in d.state.pods if ordinal_of(pod) in span and revision_of(pod) == update
            and not p.is_terminating(pod) and not p.is_ready(pod)]
    if away:
        return [f"deleted participating member(s) {', '.join(name_of(pod) for pod in taken)} while updated "
                f"member(s) {', '.join(away)} do not participate"]
    return []


def partition(d: Decision) -> list[str]:
    if d.quorum:
        return []
    span, floor = d.span, d.limits.partition
    return [f"deleted {name_of(pod)} below partition {floor}" for pod in d.deleted()
            if ordinal_of(pod) in span and position_in(span, ordinal_of(pod)) < floor
            and not (p.is_failed(pod) or p.is_succeeded(pod))]


def no_churn(d: Decision) -> list[str]:
    if not d.births:
        return []
    # The abort the decision acts under: the one its own status write records (a failed analysis run aborts in the
    # reconcile that reads it, controllers/statefulset/analysis.py), else the set's.
    written = d.written_status()
    context = birth(d.state.set if written is None else {**d.state.set, "status": written}, d.limits)
    span = d.span
    return [f"deleted {name_of(pod)}, which it created under this same template and partition, and which had not "
            f"failed (it was {stage_of(pod, d.min_ready_seconds, d.state.now)})"
            for pod in d.deleted()
            if ordinal_of(pod) in span and d.births.get(name_of(pod)) == context and not p.is_failing(pod)]


def futile_delete(d: Decision) -> list[str]:
    """An in-range pod that has not failed is never deleted when its replacement would come back at its own
    revision (it would be deleted again at once). Without a rollingUpdate block upstream recreates ordinals below
    status.currentReplicas at the current revision; once the pod is gone that count is the other non-terminating
    pods at the current revision."""
    view = d.state
    strategy = view.set["spec"].get("updateStrategy") or {}
    if d.quorum or strategy.get("type") not in ROLLING_KINDS:
        return []
    if any(strategy.get(key) for key in BLOCK_KEYS):
        return []
    status = view.set.get("status") or {}
    current = status.get("currentRevision")
    if not current or current == status.get("updateRevision"):
        return []
    span = ordinal_range(view.set)
    deleted = {name_of(pod) for pod in d.deleted()}
    problems = []
    for pod in view.pods:
        if name_of(pod) not in deleted or ordinal_of(pod) not in span or revision_of(pod) != current:
            continue
        if p.is_failed(pod) or p.is_succeeded(pod):
            continue
        remaining = sum(1 for other in view.pods if other is not pod and revision_of(other) == current
                        and not p.is_terminating(other) and name_of(other) not in deleted)
        if position_in(span, ordinal_of(pod)) < remaining:
            problems.append(f"t={view.now}: deleted {name_of(pod)}, which would come back at revision {current}")
    return problems


def ordered_creation(d: Decision) -> list[str]:
    view = d.state
    creates = d.creates()
    if not creates or view.set["spec"].get("podManagementPolicy") == "Parallel":
        return []
    span, mrs = d.span, d.min_ready_seconds
    by_ordinal = d.by_ordinal()
    problems = []
    for create in creates:
        for lower in (o for o in span if o < create.ordinal):  # the wanted ordinals below it (reserved skipped)
            pod = by_ordinal.get(lower)
            if pod is None or p.is_terminating(pod) or not p.is_available(pod, mrs, view.now):
                problems.append(f"t={view.now}: created ordinal {create.ordinal} while ordinal {lower} is not ready")
                break
    if len(creates) > 1:
        problems.append(f"t={view.now}: OrderedReady created {len(creates)} pods in one reconcile")
    return problems


def recreate(d: Decision) -> list[str]:
    view = d.state
    creates = d.creates()
    if not creates or d.limits.update_type != RECREATE:
        return []
    update = creates[0].revision
    old = [name_of(pod) for pod in view.pods if revision_of(pod) != update]
    return [f"t={view.now}: created {[name_of(c.pod) for c in creates]} while {old} exist"] if old else []


def one_pod_per_ordinal(d: Decision) -> list[str]:
    """A create at an ordinal the set still holds a pod at (terminating or not) would give it two."""
    held = d.by_ordinal()
    return [f"created {name_of(c.pod)} while {name_of(held[c.ordinal])} holds ordinal {c.ordinal}"
            for c in d.creates() if c.ordinal in held]


def wanted_ordinal(d: Decision) -> list[str]:
    span = d.span
    return [f"created {name_of(c.pod)} at ordinal {c.ordinal}, which the set does not want (wanted: "
            f"{_shown(span)})" for c in d.creates() if c.ordinal not in span]


def _shown(span: OrdinalSpan) -> str:
    return ", ".join(str(o) for o in span) if len(span) <= 8 else f"{span[0]}..{span[-1]}, {len(span)} ordinals"


def status_bounds(d: Decision) -> list[str]:
    problems = []
    for write in d.actions:
        if not isinstance(write, WriteStatus) or "replicas" not in write.status:
            continue
        s = write.status
        counts = {k: s.get(k, 0) for k in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                                           "availableReplicas")}
        if min(counts.values()) < 0:
            problems.append(f"t={d.view.now}: negative counter in {counts}")
        for k in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
            if counts[k] > counts["replicas"]:
                problems.append(f"t={d.view.now}: {k} {counts[k]} > replicas {counts['replicas']}")
        if counts["availableReplicas"] > counts["readyReplicas"]:
            problems.append(f"t={d.view.now}: availableReplicas > readyReplicas in {counts}")
    return problems


TRANSITION_RULES: dict[str, Callable[[Decision], list[str]]] = {
    "budget": budget, "quorum": quorum, "quorum-rejoin": quorum_rejoin, "partition": partition,
    "no-churn": no_churn, "futile-delete": futile_delete, "ordered-creation": ordered_creation,
    "recreate": recreate, "status-bounds": status_bounds, "one-pod-per-ordinal": one_pod_per_ordinal,
    "wanted-ordinal": wanted_ordinal,
    "disruption-budget": disruption_budget,
    "in-place-restart": in_place_restart,
    "pre-delete-hook": pre_delete_hook_held,
    "canary-step": canary_step,
    "quiescence": noop_writes,
}


def judge(d: Decision) -> list[str]:
    """Every rule's findings on one decision, each prefixed with the rule's name."""
    return [f"{name}: {problem}" for name, rule in TRANSITION_RULES.items() for problem in rule(d)]
