"""Building the starting store and each successor: admission as the API server does it, member Leases for
quorum-aware sets, and the bookkeeping every move shares (budgets, births, the older stores a lagging informer
may show, and each controller's read-your-writes record)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from rollwise import invariants
from rollwise.api.errors import NotFound
from rollwise.api.features import FeatureGates
from rollwise.api.identity import ordinal_range
from rollwise.api.leader_transfer import transfer_target
from rollwise.api.leases import LEADER, MEMBER, cluster_id, format_holder, lease_role, member_id
from rollwise.api.meta import Obj, name_of, uid_of
from rollwise.api.predicates import is_running_and_ready, is_terminating
from rollwise.cluster.resources import GroupKind
from rollwise.cluster.store.admission import Admission
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.plan import Plan
from rollwise.controllers.quorum.settings import read_settings
from rollwise.controllers.statefulset.limits import limits_of
from rollwise.controllers.view import SetView
from rollwise.explore.lag import behind
from rollwise.explore.model import (
    NAMESPACE,
    QUORUM_CONTROLLER,
    STATEFULSET_CONTROLLER,
    Bounds,
    Move,
    Node,
    Used,
    facts_of,
    with_hook_label,
)
from rollwise.explore.pods import NOW
from rollwise.invariants import Birth
from rollwise.invariants.stages import image_of
from rollwise.kubelet.quorum_binding import LEASE_WRITER, write_member_lease

__all__ = ["LEASE_WRITER", "Transition", "controllers_of", "initial_node", "successor"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Transition:
    """A move from ``before`` to ``after``; ``deleted`` are the pods a controller asked to delete (as they were),
    ``actions`` how many of the plan's actions ran and ``planned`` how many it had."""

    move: Move
    before: Node
    after: Node
    deleted: tuple[Obj, ...] = ()
    actions: int = 0
    planned: int = 0
    again: Callable[[float], tuple[SetView, Plan] | None] | None = None
    """A controller's healthy reconcile: its view and plan, and ``again(t)``, the same controller's view of the
    store this move left, at ``t``, and what it decides there (the quiescence check reconciles twice)."""
    decided: tuple[SetView, Plan] | None = None


def controllers_of(node: Node) -> tuple[str, ...]:
    if node.facts.strategy == "QuorumAware":
        return STATEFULSET_CONTROLLER, QUORUM_CONTROLLER
    return (STATEFULSET_CONTROLLER,)


def initial_node(manifest: Obj, *, gates: FeatureGates, bounds: Bounds) -> Node:
    """The set as created by a user, before any controller has looked (replicas set to ``bounds.replicas``)."""
    cluster = MemoryCluster(clock=lambda: NOW, admit=Admission(gates=gates).hooks())
    obj = copy.deepcopy(dict(with_hook_label(manifest, bounds)))
    obj["spec"] = {**obj["spec"], "replicas": bounds.replicas}
    obj.setdefault("metadata", {})["namespace"] = NAMESPACE
    sts = cluster.create(obj, actor="user")
    facts = facts_of(sts, gates=gates, broken_image=bounds.broken_image)
    return Node(cluster=cluster, facts=facts)


def successor(before: Node, cluster: MemoryCluster, move: Move, *, bounds: Bounds, used: Used | None = None,
              born: dict[str, tuple[str, int, bool]] | None = None,
              written: Mapping[str, Mapping[str, str]] | None = None) -> Node:
    """The node after ``move`` changed ``cluster`` (a fork of ``before.cluster``); ``written``: the controllers'
    read-your-writes record after it (default: unchanged).

    A pod that is gone loses its birth record; member Leases follow the pods; the older stores are kept (up to
    ``bounds.stale_depth``) while a stale reconcile may still come."""
    used = used or before.used
    if before.facts.strategy == "QuorumAware":
        _sync_leases(cluster, before.facts.resource, before.facts.name)
    names = {name_of(p) for p in cluster.list("Pod", NAMESPACE)}
    born = {k: v for k, v in (born if born is not None else before.born).items() if k in names}
    changed = cluster.cursor > 0  # a fork starts with an empty change feed
    written = before.written if written is None else written
    history: tuple[MemoryCluster, ...] = ()
    if "stale" in bounds.perturbations and used.stale < bounds.perturbation_budget:
        history = (before.cluster, *before.history)[:bounds.stale_depth] if changed else before.history
    node = Node(cluster=cluster, facts=before.facts, born=born, used=used, history=history, written=written)
    if history and bounds.read_your_writes:
        verdicts = admitted(node)
        # A store the check refuses to every controller stays refused (it only ages, and records only grow), and
        # so does every older one: forget them, so they split no state.
        keep = next((i for i, row in enumerate(verdicts) if not any(row)), len(verdicts))
        node.history, node.admitted = history[:keep], verdicts[:keep]
    return node


def admitted(node: Node) -> tuple[tuple[bool, ...], ...]:
    """Per older store of ``node``: whether each controller's read-your-writes check lets it decide on it."""
    set_uid = uid_of(node.sts)
    return tuple(tuple(not behind(node.written.get(actor, {}), actor, set_uid, old) for actor in controllers_of(node))
                 for old in node.history)


def birth(sts: Obj, gates: FeatureGates) -> Birth:
    """The template image and partition a pod is created (or judged) under: the no-churn invariant's context."""
    return invariants.birth(sts, limits_of(sts, gates))


def born_of(sts: Obj, pod: Obj, gates: FeatureGates) -> Birth | None:
    """The no-churn context a created pod is recorded under: ``birth(sts)`` when the pod was built from the set's
    template, None when it was built from an older revision's (below the partition, or without a rollingUpdate
    block below ``status.currentReplicas``, reference §4.5). Such a pod is outdated from birth: the rollout
    replacing it once its replacement comes at the update revision is a step forward, not churn."""
    context = birth(sts, gates)
    return context if image_of(pod) == context[0] else None


def spend(used: Used, **more: int) -> Used:
    return replace(used, **{k: getattr(used, k) + v for k, v in more.items()})


def _sync_leases(cluster: MemoryCluster, resource: GroupKind, set_name: str) -> None:
    """One Lease per member, written by the member itself: Leader or Member. A Ready member participates; the
    leader keeps leading while it participates, else the lowest participating ordinal takes over (an election
    with zero latency: lease lag is not explored). The writes are the one member-Lease write every driver makes
    (``kubelet/quorum_binding.py``), made only when a holder moves."""
    sts = cluster.get(resource, NAMESPACE, set_name)
    members = []
    for o in ordinal_range(sts):
        try:
            members.append(cluster.get("Pod", NAMESPACE, f"{set_name}-{o}"))
        except NotFound:  # a missing member has no say
            continue
    live = [p for p in members if is_running_and_ready(p) and not is_terminating(p)]
    lease_name = read_settings(sts)[0].lease_name
    leases = {name_of(x): x for x in cluster.list("Lease", NAMESPACE)}
    leader = next((name_of(p) for p in live if lease_role(leases.get(lease_name(name_of(p)))) == LEADER), None)
    if leader is None and live:
        leader = name_of(live[0])
    # The leader-transfer hook (rollwise.api.leader_transfer), acted on by the member's agent at once: leadership
    # moves to the named member when it participates (zero latency, as elections here).
    asked = next((transfer_target(p) for p in live if name_of(p) == leader), None)
    if asked is not None and asked in {name_of(p) for p in live}:
        leader = asked
    for pod in members:
        name = name_of(pod)
        role = LEADER if name == leader else MEMBER
        holder = format_holder(member_id(name), cluster_id(set_name), role)
        lease = leases.get(lease_name(name))
        if lease is None or (lease.get("spec") or {}).get("holderIdentity") != holder:  # written when it moves
            write_member_lease(cluster, sts, name, holder, NOW)
