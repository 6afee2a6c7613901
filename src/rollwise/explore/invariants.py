"""The explorer's view of the one set of rules (``rollwise.invariants``): a state check takes a node, a transition
check takes a move from one node to the next, and each returns what is wrong in words (empty: holds). Liveness
lives in ``search``.

A controller move becomes a ``Decision`` over the store it met (the pods it deleted, as they were, and the births
the no-churn rule reads); the quorum-aware controller's budget is its quorum. See ``rollwise.invariants.rules``
and ``rollwise.invariants.store`` for the list.
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.controllers.view import SetView
from rollwise.explore.model import NAMESPACE, QUORUM_CONTROLLER, Node
from rollwise.explore.pods import NOW
from rollwise.explore.world import Transition
from rollwise.invariants import rules, store
from rollwise.invariants.decision import Decision, delete_of

__all__ = ["STATE_INVARIANTS", "TRANSITION_INVARIANTS", "status_agrees_with_pods"]


def _decision(tr: Transition) -> Decision | None:
    """The deletions of a move, judged on the store before it (only deletions can break a transition rule)."""
    if not tr.deleted:
        return None
    before = tr.before
    budgets = tuple(before.cluster.list("PodDisruptionBudget", NAMESPACE))
    view = SetView(set=before.sts, pods=before.pods(), now=NOW, gates=before.facts.gates, budgets=budgets,
                   budget_pods=before.pods() if budgets else ())
    return Decision(view=view, actions=tuple(delete_of(pod) for pod in tr.deleted),
                    quorum=tr.move.actor == QUORUM_CONTROLLER, births=before.born)


def budget(tr: Transition) -> list[str]:
    d = _decision(tr)
    if d is None:
        return []
    return rules.quorum(d) if d.quorum else rules.budget(d)


def disruption_budget(tr: Transition) -> list[str]:
    d = _decision(tr)
    return [] if d is None else rules.disruption_budget(d)


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


TRANSITION_INVARIANTS: dict[str, Callable[[Transition], list[str]]] = {
    "budget": budget, "partition": partition, "claims": claims, "no-churn": no_churn,
    "disruption-budget": disruption_budget,
}
STATE_INVARIANTS: dict[str, Callable[[Node], list[str]]] = {
    "one-pod-per-ordinal": one_pod_per_ordinal, "recreate-never-mixes": recreate_never_mixes,
}
