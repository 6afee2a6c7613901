"""The explorer's view of the one set of rules (``rollwise.invariants``): a state check takes a node, a transition
check takes a move from one node to the next, and each returns what is wrong in words (empty: holds). Liveness
lives in ``search``.

A controller move becomes a ``Decision`` over the store it met (the pods it deleted, as they were, and the births
the no-churn rule reads); the quorum-aware controller's budget is its quorum. See ``rollwise.invariants.rules``
and ``rollwise.invariants.store`` for the list.
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api.identity import ordinal_of, revision_of
from rollwise.api.meta import name_of, uid_of
from rollwise.controllers.plan import Action, EmitEvent, InPlaceUpdatePod, WriteStatus
from rollwise.controllers.view import SetView
from rollwise.explore.environment import KUBELET, USER
from rollwise.explore.model import NAMESPACE, QUORUM_CONTROLLER, Node
from rollwise.explore.pods import NOW
from rollwise.explore.roles import leader_deleted_first
from rollwise.explore.world import Transition
from rollwise.invariants import rules, store
from rollwise.invariants.decision import Decision, delete_of
from rollwise.invariants.in_place import in_place_restart, restarting_counted_available
from rollwise.invariants.quiescence import noop_writes, settled_writes
from rollwise.invariants.stages import image_of

__all__ = ["STATE_INVARIANTS", "TRANSITION_INVARIANTS", "status_agrees_with_pods"]


def _decision(tr: Transition) -> Decision | None:
    """The deletions of a move, judged on the store before it (only deletions can break a transition rule)."""
    if not tr.deleted:
        return None
    before = tr.before
    budgets = tuple(before.cluster.list("PodDisruptionBudget", NAMESPACE))
    view = SetView(set=before.sts, pods=before.pods(), now=NOW, gates=before.facts.gates, budgets=budgets,
                   budget_pods=before.pods() if budgets else ())
    actions: list[Action] = [delete_of(pod) for pod in tr.deleted]
    status = tr.after.sts.get("status") or {}
    if tr.move.actor not in (KUBELET, USER) and status != (before.sts.get("status") or {}):
        actions.append(WriteStatus(status=status))  # a canary's step moved on: the partition rule reads the new one
    return Decision(view=view, actions=tuple(actions), quorum=tr.move.actor == QUORUM_CONTROLLER,
                    births=before.born)


def budget(tr: Transition) -> list[str]:
    d = _decision(tr)
    if d is None:
        return []
    return rules.quorum(d) + leader_last(tr) if d.quorum else rules.budget(d)


def leader_last(tr: Transition) -> list[str]:
    """DEP-07 step 4, part of the quorum-aware controller's budget: it never deletes the leader (by its Lease) while
    another outdated member participates, whatever its role source said (explore/roles.py)."""
    if not tr.deleted or tr.move.actor != QUORUM_CONTROLLER:
        return []
    before = tr.before
    leases = {name_of(x): x for x in before.cluster.list("Lease", NAMESPACE)}
    return leader_deleted_first(SetView(set=before.sts, pods=before.pods(), leases=leases, now=NOW), tr.deleted)


def disruption_budget(tr: Transition) -> list[str]:
    d = _decision(tr)
    return [] if d is None else rules.disruption_budget(d)


def pre_delete_hook(tr: Transition) -> list[str]:
    d = _decision(tr)
    return [] if d is None else rules.pre_delete_hook_held(d)


def partition(tr: Transition) -> list[str]:
    d = _decision(tr)
    return [] if d is None else rules.partition(d)


def claims(tr: Transition) -> list[str]:
    return store.claims_lost((c["metadata"]["name"] for c in tr.before.cluster.list("PersistentVolumeClaim",
                                                                                     NAMESPACE)),
                             (c["metadata"]["name"] for c in tr.after.cluster.list("PersistentVolumeClaim",
                                                                                    NAMESPACE)),
                             tr.after.in_range(), tr.before.facts.when_scaled)


def no_churn(tr: Transition) -> list[str]:
    d = _decision(tr)
    return [] if d is None else rules.no_churn(d)


def one_pod_per_ordinal(node: Node) -> list[str]:
    return store.one_pod_per_ordinal(node.pods(), single_set=True)


def recreate_never_mixes(node: Node) -> list[str]:
    return store.recreate_never_mixes(node.sts, node.pods(), node.facts.gates)


def status_agrees_with_pods(node: Node) -> list[str]:
    return store.status_agrees_with_pods(node.sts, node.pods(), NOW)


def _in_place_decision(tr: Transition) -> Decision | None:
    """A controller move's in-place updates (pods whose uid stayed and whose images it changed) and the status it
    wrote, as a decision on the store before it: the budget counts in-place updates as it counts deletions."""
    if tr.move.actor in (KUBELET, USER):
        return None
    after = {name_of(pod): pod for pod in tr.after.pods()}
    actions: list[Action] = []
    for pod in tr.before.pods():
        now = after.get(name_of(pod))
        if now is not None and uid_of(now) == uid_of(pod) and image_of(now) != image_of(pod):
            actions.append(InPlaceUpdatePod(pod=now, images=(), revision=revision_of(pod)))
    if not actions:
        return None
    status = tr.after.sts.get("status") or {}
    if status != (tr.before.sts.get("status") or {}):
        actions.append(WriteStatus(status=status))
    before = tr.before
    view = SetView(set=before.sts, pods=before.pods(), now=NOW, gates=before.facts.gates)
    return Decision(view=view, actions=tuple(actions), births=before.born)


def in_place(tr: Transition) -> list[str]:
    """In-place updates keep the budget, and a pod is never counted available while its containers restart."""
    d = _in_place_decision(tr)
    return [] if d is None else rules.budget(d) + in_place_restart(d)


def wanted_ordinals(tr: Transition) -> list[str]:
    """A controller move creates pods only at ordinals the set wants (``api.identity.ordinal_range``, reserved
    ordinals skipped), judged on the store the move met."""
    if tr.move.actor in (KUBELET, USER):
        return []
    before = {uid_of(pod) for pod in tr.before.pods()}
    span = tr.before.in_range()
    return [f"created {name_of(pod)}, whose ordinal the set does not want (wanted: {list(span)})"
            for pod in tr.after.pods() if uid_of(pod) not in before and ordinal_of(pod) not in span]


def restarting_not_available(node: Node) -> list[str]:
    return restarting_counted_available(node.pods(), node.facts.min_ready_seconds, NOW)


LATER = 1.0
"""How much later the quiescence check reconciles again (less, where the first plan asked to be woken sooner)."""


def quiescence(tr: Transition) -> list[str]:
    """A controller's healthy reconcile makes no write equal to what it replaces, and a second reconcile of the
    world it left, a moment later (before its requeue), writes nothing (``invariants.quiescence``). The explorer's
    clock stands still, so without the second look a status that moves with the clock would go unseen."""
    if tr.decided is None or tr.again is None:
        return []
    view, plan = tr.decided
    first = Decision(view=view, actions=plan.actions)
    found = noop_writes(first)
    if found or any(not isinstance(a, WriteStatus | EmitEvent) for a in plan.actions):
        return found  # the world moved on by its own writes: the next state's reconcile is judged there
    requeue = plan.requeue_after
    second = tr.again(view.now + (LATER if requeue is None else min(LATER, requeue / 2)))
    if second is None:
        return []
    later, plan_then = second
    return settled_writes(first, requeue, Decision(view=later, actions=plan_then.actions))


def canary_step(tr: Transition) -> list[str]:
    """A controller's reconcile moves a canary past ``pause: {}`` or an analysis step only after a promote."""
    if tr.decided is None:
        return []
    view, plan = tr.decided
    return rules.canary_step(Decision(view=view, actions=plan.actions))


TRANSITION_INVARIANTS: dict[str, Callable[[Transition], list[str]]] = {
    "budget": budget, "partition": partition, "claims": claims, "no-churn": no_churn, "in-place": in_place,
    "disruption-budget": disruption_budget, "wanted-ordinals": wanted_ordinals, "pre-delete-hook": pre_delete_hook,
    "quiescence": quiescence, "canary-step": canary_step,
}
STATE_INVARIANTS: dict[str, Callable[[Node], list[str]]] = {
    "one-pod-per-ordinal": one_pod_per_ordinal, "recreate-never-mixes": recreate_never_mixes,
    "in-place-restart": restarting_not_available,
}
