"""Breadth-first search over canonical states, so the first violation of each invariant has a shortest trace;
then liveness over the healthy sub-graph.

Liveness (issue 9): from every reachable state whose template is good, every path of healthy moves (controllers
unperturbed, pods progressing and recovering, terminations finishing; no user action, no fault) reaches a
completed rollout. A state violates it when, without leaving the non-completed states, healthy moves can reach a
state with no healthy move that changes anything (stuck) or a cycle (a livelock such as create-then-delete).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.identity import ordinal_of, revision_of
from rollwise.api.ordinals import position_in
from rollwise.api.rollout import rollout_complete as is_rollout_complete
from rollwise.api.steps import canary_limit
from rollwise.api.strategies import (
    ENFORCED_ROLLING_UPDATE,
    ON_DELETE,
    QUORUM_AWARE_POLICY,
    RECREATE,
    ROLLING_UPDATE,
    handed_to_quorum,
)
from rollwise.controllers.statefulset.limits import limits_of
from rollwise.explore.controller import Decide, controller_moves
from rollwise.explore.environment import environment_moves
from rollwise.explore.invariants import STATE_INVARIANTS, TRANSITION_INVARIANTS, status_agrees_with_pods
from rollwise.explore.model import STATEFULSET_CONTROLLER, Bounds, Move, Node, Used
from rollwise.explore.pods import NOW
from rollwise.invariants.abort import off_the_stable_revision
from rollwise.invariants.stages import image_of

__all__ = ["Exploration", "Violation", "explore", "follow", "rollout_complete"]

LIVENESS = "liveness"
STATUS = "status"


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    invariant: str
    message: str
    trace: tuple[Move, ...]
    """The moves from the starting state, shortest first found; the last one breaks the invariant (for liveness,
    the moves that lead to the state from which healthy moves never complete the rollout)."""
    cycle: tuple[Move, ...] = ()
    """Liveness: healthy moves that go round without completing (empty: stuck with nothing left to do)."""


@dataclass(slots=True, kw_only=True)
class Exploration:
    set_name: str
    strategy: str
    policy: str
    states: int = 0
    transitions: int = 0
    checks: int = 0
    complete: bool = True
    """False when ``max_states`` stopped the search before the state space was exhausted."""
    violations: list[Violation] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def invariants(self) -> list[str]:
        return [*TRANSITION_INVARIANTS, *STATE_INVARIANTS, STATUS, LIVENESS]


def rollout_complete(node: Node) -> bool:
    """The shared rule (``api/rollout.py``) once the controller has seen the latest spec; under plain OnDelete any
    revision will do (the controller never replaces a pod there), so only presence and availability count; so too
    while the set is paused (spec.paused: the controller scales and repairs, and replaces nothing). An aborted
    rollout is complete once every pod is back at the stable revision."""
    sts = node.sts
    status = sts.get("status") or {}
    if status.get("observedGeneration") != sts["metadata"].get("generation"):
        return False
    if off_the_stable_revision(sts, node.pods()):
        return False  # an aborted rollout ends with every pod at the stable revision (invariants/abort.py)
    span = node.in_range()
    pods = {ordinal_of(pod): pod for pod in node.pods()}
    # A quorum-aware canary holds a count of members, whichever they are (api/steps.canary_limit), where a rolling
    # update's holds a partition: its step is reached with that many at the update revision, all available.
    canary = canary_limit(sts) if handed_to_quorum(sts) else None
    held = node.facts.strategy == ON_DELETE or sts["spec"].get("paused") is True or canary is not None
    floor = len(span) if held else limits_of(sts, node.facts.gates).partition
    update = str(status.get("updateRevision") or "")
    if canary is not None and sum(1 for pod in pods.values() if revision_of(pod) == update) < canary:
        return False
    return is_rollout_complete([pods.get(o) for o in span], outside_range=sum(1 for o in pods if o not in span),
                               floor=floor, update_revision=update,
                               min_ready_seconds=node.facts.min_ready_seconds, now=NOW)


def explore(start: Node, bounds: Bounds, *, decide: Decide | None = None,
            progress: Callable[[int], None] | None = None) -> Exploration:
    began = time.perf_counter()
    facts = start.facts
    result = Exploration(set_name=facts.name, strategy=facts.strategy, policy=facts.policy)
    ids: dict[tuple[Any, ...], int] = {start.key: 0}
    budgets: dict[tuple[Any, ...], list[tuple[Used, int]]] = {start.key_but_budgets: [(start.used, 0)]}
    parent: list[tuple[int, Move] | None] = [None]
    healthy: list[list[tuple[int, Move]]] = [[]]
    done: list[bool] = [rollout_complete(start)]
    eligible: list[bool] = [_eligible(start)]
    found: set[str] = set()
    queue: deque[tuple[int, Node]] = deque([(0, start)])

    def report(invariant: str, message: str, at: int, last: Move | None) -> None:
        if invariant in found:
            return
        found.add(invariant)
        trace = _trace(parent, at) + ((last,) if last is not None else ())
        result.violations.append(Violation(invariant=invariant, message=message, trace=trace))

    while queue:
        nid, node = queue.popleft()
        for name, check in STATE_INVARIANTS.items():
            result.checks += 1
            for problem in check(node):
                report(name, problem, nid, None)
        transitions = list(controller_moves(node, bounds, decide=decide))
        quiet = all(tr.after.key == node.key for tr in transitions if tr.move.healthy)
        transitions += list(environment_moves(node, bounds, controllers_quiet=quiet))
        for tr in transitions:
            result.transitions += 1
            for name, tcheck in TRANSITION_INVARIANTS.items():
                result.checks += 1
                for problem in tcheck(tr):
                    report(name, problem, nid, tr.move)
            key = tr.after.key
            if key == node.key:
                if tr.move.actor == STATEFULSET_CONTROLLER and tr.move.healthy:
                    # A quiet controller: what it reports must be what the pods say.
                    result.checks += 1
                    for problem in status_agrees_with_pods(node):
                        report(STATUS, problem, nid, None)
                continue  # a move that changes nothing is no transition
            cid = ids.get(key)
            if cid is None:
                cid = _covering(budgets, tr.after)
            if cid is None:
                if len(ids) >= bounds.max_states:
                    result.complete = False
                    continue
                cid = ids[key] = len(parent)
                budgets.setdefault(tr.after.key_but_budgets, []).append((tr.after.used, cid))
                parent.append((nid, tr.move))
                healthy.append([])
                done.append(rollout_complete(tr.after))
                eligible.append(_eligible(tr.after))
                queue.append((cid, tr.after))
                if progress is not None and cid % 500 == 0:
                    progress(cid)
            if tr.move.healthy:
                healthy[nid].append((cid, tr.move))
    result.states = len(parent)
    if result.complete:
        _liveness(result, parent, healthy, done, eligible)
    result.seconds = time.perf_counter() - began
    return result


def _covering(budgets: dict[tuple[Any, ...], list[tuple[Used, int]]], node: Node) -> int | None:
    """A state already found that is ``node`` but with no more budget spent (subsumption). Its moves include all of
    ``node``'s: the budgets only enable moves (faults, user actions, template changes, perturbations) and nothing
    else reads them, so every violation reachable from ``node`` is reachable from it, by a path no longer (breadth
    first: it was found no later). Healthy moves spend nothing, so liveness judges both alike, and a move into
    ``node`` may stand for a move into it. Only a state with more budget left is explored apart."""
    for used, found in budgets.get(node.key_but_budgets, ()):
        if used.within(node.used):
            return found
    return None


_SELF_HEALING = frozenset({ENFORCED_ROLLING_UPDATE, RECREATE, QUORUM_AWARE_POLICY})


def _eligible(node: Node) -> bool:
    """Liveness is owed from here: the template is good, and either the strategy replaces a broken pod by itself
    or no pod runs the broken template. Upstream's RollingUpdate under OrderedReady and OnDelete leave a broken pod
    to a person (upstream #67250, "forced rollback"); that is what EnforcedRollingUpdate (seed 003) is for. No
    strategy replaces a broken pod below the partition."""
    facts = node.facts
    sts = node.sts
    if image_of(sts["spec"]["template"]) == facts.broken_image:
        return False
    broken = [ordinal_of(pod) for pod in node.pods() if image_of(pod) == facts.broken_image]
    # A pod below the partition keeps its revision by design, a broken one included.
    span = node.in_range()
    if any(position_in(span, o) < limits_of(sts, facts.gates).partition for o in broken):
        return False
    if facts.strategy in _SELF_HEALING or (facts.strategy == ROLLING_UPDATE and facts.policy == "Parallel"):
        return True
    return not broken


def _trace(parent: list[tuple[int, Move] | None], at: int) -> tuple[Move, ...]:
    moves: list[Move] = []
    while (link := parent[at]) is not None:
        at, move = link
        moves.append(move)
    return tuple(reversed(moves))


def _liveness(result: Exploration, parent: list[tuple[int, Move] | None],
              healthy: list[list[tuple[int, Move]]], done: list[bool], eligible: list[bool]) -> None:
    """Find the first (BFS order, so shortest trace) eligible non-completed state that is stuck or on a cycle."""
    n = len(parent)
    pending = [eligible[i] and not done[i] for i in range(n)]
    # Iteratively peel states all of whose healthy successors are known to complete; what remains cannot.
    good = [done[i] for i in range(n)]
    preds: list[list[int]] = [[] for _ in range(n)]
    remaining = [0] * n
    for i in range(n):
        if pending[i]:
            remaining[i] = len(healthy[i])
            for j, _ in healthy[i]:
                preds[j].append(i)
    work = deque(i for i in range(n) if good[i])
    while work:
        j = work.popleft()
        for i in preds[j]:
            if not pending[i] or good[i]:
                continue
            remaining[i] -= 1
            if remaining[i] == 0 and healthy[i]:
                good[i] = True
                work.append(i)
    bad = next((i for i in range(n) if pending[i] and not good[i]), None)
    if bad is None:
        return
    # Walk healthy moves from the bad state through bad states until stuck or a state repeats.
    path: list[tuple[int, Move]] = []
    seen = {bad: 0}
    at = bad
    while True:
        nxt = next(((j, m) for j, m in healthy[at] if not good[j]), None)
        if nxt is None:
            message = "no healthy move completes the rollout: stuck"
            cycle: tuple[Move, ...] = tuple(m for _, m in path)
            break
        path.append(nxt)
        at = nxt[0]
        if at in seen:
            start = seen[at]
            cycle = tuple(m for _, m in path[start:])
            message = f"healthy moves go round a cycle of {len(cycle)} without completing the rollout"
            break
        seen[at] = len(path)
    result.violations.append(Violation(invariant=LIVENESS, message=message, trace=_trace(parent, bad), cycle=cycle))


def follow(start: Node, bounds: Bounds, moves: list[str], *, decide: Decide | None = None
           ) -> list[tuple[Move, dict[str, list[str]]]]:
    """Walk one path, move by move (each named as ``Move.words`` prints it, or without the pods a controller
    created and deleted), and check the invariants on the way: a printed trace becomes a fast regression test.
    Raises LookupError when a move is not possible there."""
    node = start
    out: list[tuple[Move, dict[str, list[str]]]] = []
    for words in moves:
        transitions = list(controller_moves(node, bounds, decide=decide))
        quiet = all(tr.after.key == node.key for tr in transitions if tr.move.healthy)
        transitions += list(environment_moves(node, bounds, controllers_quiet=quiet))
        tr = next((t for t in transitions if t.move.words() == words), None) or next(
            (t for t in transitions if _without_effects(t.move) == words), None)
        if tr is None:
            possible = "; ".join(t.move.words() for t in transitions)
            raise LookupError(f"{words!r} is not a move from here; possible: {possible}")
        problems = {name: found for name, check in TRANSITION_INVARIANTS.items() if (found := check(tr))}
        problems.update({name: found for name, scheck in STATE_INVARIANTS.items() if (found := scheck(tr.after))})
        out.append((tr.move, problems))
        node = tr.after
    return out


def _without_effects(move: Move) -> str:
    plain = Move(actor=move.actor, kind=move.kind, target=move.target,
                 detail="; ".join(p for p in move.detail.split("; ") if not p.startswith(("creates ", "deletes "))))
    return plain.words()
