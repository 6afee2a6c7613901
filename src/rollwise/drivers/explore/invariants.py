"""Safety invariants, one function each: a state check takes a node, a transition check takes a move from one
node to the next. Each returns what is wrong in words (empty: holds). Liveness lives in ``search``.

The list (issue: "Safety you can prove"; DESIGN.md "Tests"):

- budget: the controller's own deletions never leave more in-range ordinals unavailable than the strategy's
  budget (KEP-961 maxUnavailable; 1 without it; 0 under OnDelete); the quorum-aware controller never takes a
  cluster that has quorum below it, unless it has no headroom at all (1 or 2 members, DEP-07);
- partition: a pod below the partition is deleted by the controller only when it failed;
- recreate: never pods of two revisions at once under Recreate, terminating ones included (seed 000);
- one pod per ordinal;
- claims: never a claim deleted while its ordinal is in range, nor under whenScaled Retain (reference §6.2);
- no churn: never a healthy in-range pod deleted by the controller that built it from the same template under the
  same partition (a pod it has just created must not be replaced for nothing). A pod built from an older
  revision (reference §4.5) is outdated from birth; replacing it is the rollout's step (world.born_of);
- status: once the controller has nothing left to do, its status counters agree with the pods.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from rollwise.api import predicates as p
from rollwise.api.identity import ordinal_of, revision_of
from rollwise.api.meta import name_of
from rollwise.drivers.explore.model import NAMESPACE, QUORUM_CONTROLLER, Node, budget_of, partition_of
from rollwise.drivers.explore.pods import NOW, stage_of
from rollwise.drivers.explore.world import Transition, birth

__all__ = ["STATE_INVARIANTS", "TRANSITION_INVARIANTS", "status_agrees_with_pods"]


def _unavailable(node: Node) -> list[int]:
    mrs = node.facts.min_ready_seconds
    by_ordinal = {ordinal_of(pod): pod for pod in node.pods()}
    return [o for o in node.in_range() if p.is_unavailable(by_ordinal.get(o), mrs, NOW)]


def _participating(node: Node) -> int:
    span = node.in_range()
    return sum(1 for pod in node.pods() if ordinal_of(pod) in span and p.is_ready(pod) and not p.is_terminating(pod))


def budget(tr: Transition) -> list[str]:
    if not tr.deleted:
        return []
    before, after = tr.before, tr.after
    mrs = before.facts.min_ready_seconds
    span = before.in_range()
    taken = [pod for pod in tr.deleted if ordinal_of(pod) in span and p.is_available(pod, mrs, NOW)]
    if not taken:
        return []
    names = ", ".join(name_of(pod) for pod in taken)
    if tr.move.actor == QUORUM_CONTROLLER:
        quorum = len(span) // 2 + 1
        had, left = _participating(before), _participating(after)
        # DEP-07: a set with no headroom (1 or 2 members) takes its one deletion anyway, or it could never update.
        if had >= quorum > left and len(span) > quorum:
            return [f"deleted participating member(s) {names}: {left} of {had} left, quorum is {quorum}"]
        return []
    allowed = budget_of(before.sts, before.facts)
    if allowed is None:
        return []
    down = _unavailable(after)
    if len(down) > allowed:
        return [f"deleted available pod(s) {names}: ordinals {down} now unavailable, budget {allowed}"]
    return []


def partition(tr: Transition) -> list[str]:
    if tr.move.actor == QUORUM_CONTROLLER or not tr.before.facts.has_partition:
        return []
    sts = tr.before.sts
    floor = tr.before.in_range().start + partition_of(sts)
    span = tr.before.in_range()
    return [f"deleted {name_of(pod)} below partition {floor}" for pod in tr.deleted
            if ordinal_of(pod) in span and ordinal_of(pod) < floor and not p.is_failed(pod)]


def claims(tr: Transition) -> list[str]:
    gone = ({name_of(c) for c in tr.before.cluster.list("PersistentVolumeClaim", NAMESPACE)}
            - {name_of(c) for c in tr.after.cluster.list("PersistentVolumeClaim", NAMESPACE)})
    if not gone:
        return []
    span = tr.after.in_range()
    problems = []
    for claim in sorted(gone):
        ordinal = int(claim.rsplit("-", 1)[1])
        if ordinal in span:
            problems.append(f"claim {claim} deleted while ordinal {ordinal} is in range")
        elif tr.before.facts.when_scaled == "Retain":
            problems.append(f"claim {claim} deleted under whenScaled Retain")
    return problems


def no_churn(tr: Transition) -> list[str]:
    context = birth(tr.before.sts)
    span = tr.before.in_range()
    return [f"deleted {name_of(pod)}, which it created under this same template and partition, and which had not "
            f"failed (it was {stage_of(pod, tr.before.facts.min_ready_seconds)})"
            for pod in tr.deleted
            if ordinal_of(pod) in span and tr.before.born.get(name_of(pod)) == context and not p.is_failing(pod)]


def one_pod_per_ordinal(node: Node) -> list[str]:
    seen = Counter(ordinal_of(pod) for pod in node.pods())
    return [f"{n} pods at ordinal {o}" for o, n in seen.items() if n > 1]


def recreate_never_mixes(node: Node) -> list[str]:
    if node.facts.strategy != "Recreate" or not node.facts.gates.recreate:
        return []
    revisions = {revision_of(pod) for pod in node.pods()}
    if len(revisions) > 1:
        return [f"pods of {len(revisions)} revisions at once: "
                + ", ".join(f"{name_of(pod)}@{revision_of(pod)}" for pod in node.pods())]
    return []


def status_agrees_with_pods(node: Node) -> list[str]:
    """For a settled controller: the counters it reports are the pods' (the rules of compute_status, recounted)."""
    sts = node.sts
    status = sts.get("status") or {}
    if status.get("observedGeneration") != sts["metadata"].get("generation"):
        return [f"observedGeneration {status.get('observedGeneration')} behind generation "
                f"{sts['metadata'].get('generation')} with nothing left to do"]
    pods = [pod for pod in node.pods() if p.is_created(pod)]
    mrs = node.facts.min_ready_seconds
    live = [pod for pod in pods if not p.is_terminating(pod)]
    want = {
        "replicas": len(pods),
        "readyReplicas": sum(p.is_running_and_ready(pod) for pod in pods),
        "availableReplicas": sum(p.is_available(pod, mrs, NOW) for pod in pods),
        "updatedReplicas": sum(revision_of(pod) == status.get("updateRevision") for pod in live),
    }
    return [f"status.{k} is {status.get(k, 0)}, the pods say {v}" for k, v in want.items() if status.get(k, 0) != v]


TRANSITION_INVARIANTS: dict[str, Callable[[Transition], list[str]]] = {
    "budget": budget, "partition": partition, "claims": claims, "no-churn": no_churn,
}
STATE_INVARIANTS: dict[str, Callable[[Node], list[str]]] = {
    "one-pod-per-ordinal": one_pod_per_ordinal, "recreate-never-mixes": recreate_never_mixes,
}
