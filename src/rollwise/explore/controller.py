"""The controllers' moves: build the view from the store, decide with the real pure controller, and carry the
Plan out through the real executor, behind the runtime's read-your-writes check — unperturbed, on a stale view,
or cut short by a crash.

- stale (``stale:K``): the view comes from the store as it was up to K moves earlier (an informer that has not
  delivered the controller's own last writes, or a pod's last transitions). With the check on (the default, as the
  operator runs), a store that misses one of the controller's own writes is refused (``lag.behind``) and only the
  newer ones are decided on; with it off, any of them. The writes go to the real store, where optimistic
  concurrency refuses what was read at an old resourceVersion, as the API server does.
- crash: only the first k actions run (k from 1 to all but one), then the process is gone; the next controller
  move is a fresh controller, which is what a stateless, level-triggered controller is.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Iterator

from rollwise.api.errors import NotFound
from rollwise.api.meta import Obj, name_of, uid_of
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.plan import CreatePod, DeletePod, Plan
from rollwise.controllers.quorum import reconcile_quorum
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.explore.lag import behind, recording
from rollwise.explore.model import NAMESPACE, QUORUM_CONTROLLER, Bounds, Move, Node
from rollwise.explore.pods import NOW
from rollwise.explore.roles import faults, probe_of_set, truthful
from rollwise.explore.world import Transition, born_of, controllers_of, spend, successor
from rollwise.runtime.execute import execute
from rollwise.runtime.views import set_view

__all__ = ["Decide", "controller_moves"]

Decide = Callable[[SetView], Plan]


def controller_moves(node: Node, bounds: Bounds, *, decide: Decide | None = None) -> Iterator[Transition]:
    """Every controller's move from ``node``; ``decide`` replaces the StatefulSet controller (a test's toy)."""
    for actor in controllers_of(node):
        fn: Decide = reconcile_quorum if actor == QUORUM_CONTROLLER else (decide or reconcile)
        yield from _moves_of(node, actor, fn, bounds)


_STALE: weakref.WeakKeyDictionary[MemoryCluster, dict[tuple[str, Decide], tuple[SetView, Plan] | None]] = \
    weakref.WeakKeyDictionary()
"""Each history store's view and plan, per controller: a store stays in the history of every node up to K moves
below the one that made it, and each of them would otherwise build the same view and decide the same plan on it
again (the decision is a pure function of the view; the set's name, kind and gates are the exploration's)."""


def _stale_plan(old: MemoryCluster, node: Node, actor: str, decide: Decide) -> tuple[SetView, Plan] | None:
    memo = _STALE.setdefault(old, {})
    key = (actor, decide)
    if key not in memo:
        view = _view(old, node)
        memo[key] = None if view is None else (view, decide(view))
    return memo[key]


def _view(cluster: MemoryCluster, node: Node, *, now: float = NOW) -> SetView | None:
    try:
        sts = cluster.get(node.facts.resource, NAMESPACE, node.facts.name)
    except NotFound:
        return None
    view = set_view(cluster, sts, now=now, gates=node.facts.gates)
    # A role-probed set's members answer the truth (their Leases), as the operator's probe runner would hand it.
    return dataclasses.replace(view, probes=truthful(view)) if probe_of_set(sts) is not None else view


def _moves_of(node: Node, actor: str, decide: Decide, bounds: Bounds) -> Iterator[Transition]:
    view = _view(node.cluster, node)
    if view is None:
        return
    plan = decide(view)
    healthy = _run(node, actor, plan, view, bounds, Move(actor=actor, kind="reconciles"))
    after = healthy.after

    def again(at: float) -> tuple[SetView, Plan] | None:
        later = _view(after.cluster, after, now=at)
        return None if later is None else (later, decide(later))

    yield dataclasses.replace(healthy, decided=(view, plan), again=again)
    n = len(plan.actions)
    if "crash" in bounds.perturbations and node.used.crashes < bounds.perturbation_budget:
        for k in range(1, n):
            yield _run(node, actor, plan, view, bounds,
                       Move(actor=actor, kind="crashes mid-plan", detail=f"after {k} of {n} actions", healthy=False),
                       stop_after=k, crashes=1)
    if "roles" in bounds.perturbations and actor == QUORUM_CONTROLLER and node.used.roles < bounds.perturbation_budget:
        for detail, faulty in faults(view):
            yield _run(node, actor, decide(faulty), faulty, bounds,
                       Move(actor=actor, kind="reconciles on a faulty role source", detail=detail, healthy=False),
                       roles=1)
    if "stale" in bounds.perturbations and node.used.stale < bounds.perturbation_budget:
        written = node.written.get(actor, {})
        for depth, old in enumerate(node.history, start=1):
            if bounds.read_your_writes and behind(written, actor, uid_of(view.set), old):
                continue  # the runtime skips this reconcile and requeues: nothing changes
            decided = _stale_plan(old, node, actor, decide)
            if decided is not None:
                stale, plan_then = decided
                misses = "misses the last change" if depth == 1 else f"misses the last {depth} changes"
                yield _run(node, actor, plan_then, stale, bounds,
                           Move(actor=actor, kind="reconciles on a stale view", detail=misses, healthy=False),
                           stale=1)


def _run(node: Node, actor: str, plan: Plan, view: SetView, bounds: Bounds, move: Move, *,
         stop_after: int | None = None, **spent: int) -> Transition:
    cluster = node.cluster.fork()
    actions = plan.actions if stop_after is None else plan.actions[:stop_after]
    pods = {name_of(p): p for p in node.cluster.list("Pod", NAMESPACE)}
    written = node.written
    if "stale" in bounds.perturbations:
        notes, consistency = recording(node.written.get(actor, {}), actor, uid_of(view.set))
        execute(Plan(actions=actions), cluster, sts=view.set, actor=actor, hooks=notes)
        written = {**node.written, actor: consistency.written(actor)}
    else:  # no view lags: the check would always pass, and its record would never be read
        execute(Plan(actions=actions), cluster, sts=view.set, actor=actor)
    deleted: list[Obj] = []
    created: list[str] = []
    born = dict(node.born)
    for action in actions:
        if isinstance(action, DeletePod) and (before := pods.get(action.name)) is not None \
                and not (before.get("metadata") or {}).get("deletionTimestamp") and _deleted(cluster, before):
            deleted.append(before)
        elif isinstance(action, CreatePod) and _created(cluster, pods.get(name_of(action.pod)), action.pod):
            if (built := born_of(view.set, action.pod, node.facts.gates)) is not None:
                born[name_of(action.pod)] = built
            created.append(name_of(action.pod))
    move = _with_effects(move, created=created,
                         deleted=[name_of(pod) for pod in deleted])
    after = successor(node, cluster, move, bounds=bounds, used=spend(node.used, **spent) if spent else None,
                      born=born, written=written)
    return Transition(move=move, before=node, after=after, deleted=tuple(deleted), actions=len(actions),
                      planned=len(plan.actions))


def _with_effects(move: Move, *, created: list[str], deleted: list[str]) -> Move:
    """Name the pods the move created and deleted, so a trace says which pods, and a replay knows when."""
    effects = [f"creates {name}" for name in sorted(created)] + [f"deletes {name}" for name in sorted(deleted)]
    if not effects:
        return move
    detail = "; ".join(filter(None, [move.detail, ", ".join(effects)]))
    return Move(actor=move.actor, kind=move.kind, target=move.target, detail=detail, healthy=move.healthy,
                created=tuple(sorted(created)), deleted=tuple(sorted(deleted)))


def _created(cluster: MemoryCluster, before: Obj | None, pod: Obj) -> bool:
    try:
        now = cluster.get("Pod", NAMESPACE, name_of(pod))
    except NotFound:
        return False
    return before is None or now["metadata"].get("uid") != before["metadata"].get("uid")


def _deleted(cluster: MemoryCluster, pod: Obj) -> bool:
    try:
        now = cluster.get("Pod", NAMESPACE, name_of(pod))
    except NotFound:
        return True
    return now["metadata"].get("uid") != pod["metadata"].get("uid") or bool(now["metadata"].get("deletionTimestamp"))
