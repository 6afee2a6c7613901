"""The environment's moves, each a nondeterministic choice: pods progress, fail and recover, terminations finish,
and a user changes the template (to a good or a broken image), scales, moves the partition or deletes a pod.

Faults, template changes and user actions each spend a budget (``Bounds``), so the state space is finite. Without
the ``burst`` perturbation the world moves only once every controller is quiet (its reconcile would change
nothing): controllers react to each transition before the next, with zero latency, as in the simulator. With it,
any number of transitions may pile up unseen while a controller still has work to do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rollwise.api import predicates as p
from rollwise.api.abort import NothingToAbort, aborted_status
from rollwise.api.errors import ApiStatusError
from rollwise.api.lifecycle import hook_held, is_preparing_delete, pre_delete_hook
from rollwise.api.meta import Obj, name_of
from rollwise.api.steps import NothingToPromote, promoted_status, set_steps
from rollwise.api.strategies import KINDS
from rollwise.cluster.resources import ANALYSIS_RUN
from rollwise.controllers.statefulset.analysis import OUTCOMES, still_running
from rollwise.explore.model import HOOK_LABEL, HOOK_VALUE, NAMESPACE, Bounds, Move, Node, Used
from rollwise.explore.pods import stage_of, status_for
from rollwise.explore.world import Transition, spend, successor
from rollwise.invariants.stages import (
    AVAILABLE,
    CRASHING,
    CREATING,
    FAILED,
    PENDING,
    PULL_FAILING,
    READY,
    RUNNING,
    image_of,
)
from rollwise.kubelet.hook_agent import release_hook
from rollwise.runtime.actors import ANALYSIS_CONTROLLER

__all__ = ["environment_moves"]

KUBELET = "kubelet"
USER = "user"
APP = "app"
"""The application's own agent: it releases a pod's pre-delete hook once the controller marks it (issue 28)."""
ADDS_HOOK, REMOVES_HOOK = "adds a pre-delete hook", "removes the pre-delete hook"
RELEASES_HOOK = "releases its pre-delete hook"
_FAULTS = {RUNNING: ("crash", "fail"), READY: ("crash", "fail"), AVAILABLE: ("crash", "fail"),
           PENDING: ("pull-fault",), CREATING: ("pull-fault",)}


def environment_moves(node: Node, bounds: Bounds, *, controllers_quiet: bool) -> Iterator[Transition]:
    if not controllers_quiet and "burst" not in bounds.perturbations:
        return
    for pod in node.pods():
        yield from _pod_moves(node, pod, bounds)
    yield from _analysis_verdicts(node, bounds)
    yield from _user_set_moves(node, bounds)


def _pod_moves(node: Node, pod: Obj, bounds: Bounds) -> Iterator[Transition]:
    name = name_of(pod)
    if p.is_terminating(pod):
        yield _remove(node, name, bounds)
        return
    if is_preparing_delete(pod) and hook_held(pre_delete_hook(node.sts), pod):
        # The agent drains the marked pod and removes the hook's label; it may come before any other move.
        cluster = node.cluster.fork()
        release_hook(cluster, NAMESPACE, name, actor=APP)
        move = Move(actor=APP, kind=RELEASES_HOOK, target=name)
        yield Transition(move=move, before=node, after=successor(node, cluster, move, bounds=bounds))
    restart = _in_place_restart(node, pod, bounds)
    if restart is not None:
        yield restart
        return
    facts = node.facts
    stage = stage_of(pod, facts.min_ready_seconds)
    broken = image_of(pod) == facts.broken_image
    if stage == PENDING and facts.strategy == "QuorumAware":
        # The quorum-aware controller tells "no status yet" (Unknown) from ContainerCreating (Transient), DEP-07;
        # to the StatefulSet controller both are a Pending pod, so only quorum-aware sets take this extra step.
        yield _set_stage(node, bounds, pod, CREATING, Move(actor=KUBELET, kind="container creating", target=name))
    elif stage in (PENDING, CREATING):
        yield _set_stage(node, bounds, pod, PULL_FAILING if broken else RUNNING,
                         Move(actor=KUBELET, kind="image pull fails" if broken else "container starts", target=name))
    elif stage == RUNNING:
        yield _set_stage(node, bounds, pod, READY, Move(actor=KUBELET, kind="readiness passes", target=name))
    elif stage == READY:
        yield _set_stage(node, bounds, pod, AVAILABLE,
                         Move(actor=KUBELET, kind="minReadySeconds elapse", target=name,
                              detail=f"{facts.min_ready_seconds:g} s"))
    elif stage in (CRASHING, PULL_FAILING) and not broken:
        yield _set_stage(node, bounds, pod, RUNNING, Move(actor=KUBELET, kind="recovers", target=name))
    if node.used.faults < bounds.faults:
        for fault in _FAULTS.get(stage, ()):
            if fault == "pull-fault" and broken:
                continue
            to = {"crash": CRASHING, "fail": FAILED, "pull-fault": PULL_FAILING}[fault]
            move = Move(actor=KUBELET, kind=f"fault: {fault}", target=name, healthy=False)
            yield _set_stage(node, bounds, pod, to, move, used=spend(node.used, faults=1))
    if node.used.user_actions < bounds.user_actions:
        cluster = node.cluster.fork()
        cluster.delete("Pod", NAMESPACE, name, actor=USER)
        move = Move(actor=USER, kind="deletes pod", target=name, healthy=False)
        yield Transition(move=move, before=node,
                         after=successor(node, cluster, move, bounds=bounds, used=spend(node.used, user_actions=1)))


def _in_place_restart(node: Node, pod: Obj, bounds: Bounds) -> Transition | None:
    """A container whose spec image no longer is the one its status runs (an in-place update patched it): the
    kubelet kills it and creates it again with the new image. Until then the status still reports the old
    container (Ready, maybe): the window the in-place-restart invariant watches."""
    spec = {c.get("name"): c.get("image") for c in (pod.get("spec") or {}).get("containers") or ()}
    statuses = (pod.get("status") or {}).get("containerStatuses") or ()
    if not any(cs.get("image") != spec.get(cs.get("name")) for cs in statuses):
        return None
    return _set_stage(node, bounds, pod, CREATING,
                      Move(actor=KUBELET, kind="restarts the container with its new image", target=name_of(pod)))


def _set_stage(node: Node, bounds: Bounds, pod: Obj, stage: str, move: Move, *, used: Used | None = None
               ) -> Transition:
    cluster = node.cluster.fork()
    cluster.update_status({**pod, "status": status_for(pod, stage, min_ready_seconds=node.facts.min_ready_seconds)},
                          actor=KUBELET)
    return Transition(move=move, before=node, after=successor(node, cluster, move, bounds=bounds, used=used))


def _remove(node: Node, name: str, bounds: Bounds) -> Transition:
    """The kubelet's final delete (grace 0); the garbage collector then removes what the pod owned."""
    cluster = node.cluster.fork()
    cluster.delete("Pod", NAMESPACE, name, grace_period_seconds=0, actor=KUBELET)
    move = Move(actor=KUBELET, kind="termination finishes", target=name)
    return Transition(move=move, before=node, after=successor(node, cluster, move, bounds=bounds))


def _user_set_moves(node: Node, bounds: Bounds) -> Iterator[Transition]:
    facts = node.facts
    sts = node.sts
    spec = sts["spec"]
    if node.used.template_changes < bounds.template_changes:
        current = image_of(spec["template"])
        for image in (*facts.good_images, facts.broken_image):
            if image == current:
                continue
            containers = [dict(c) for c in spec["template"]["spec"]["containers"]]
            containers[0]["image"] = image
            merge = {"spec": {"template": {"spec": {"containers": containers}}}}
            label = "broken" if image == facts.broken_image else "good"
            yield from _patch(node, merge, Move(actor=USER, kind="changes the template", target=facts.name,
                                                detail=f"image {image}, {label}", healthy=False),
                              bounds, template_changes=1)
    if node.used.user_actions >= bounds.user_actions:
        return
    replicas = int(spec.get("replicas", 1))
    for target in (replicas - 1, replicas + 1):
        if max(1, bounds.replicas - 1) <= target <= bounds.replicas and target != replicas:
            yield from _patch(node, {"spec": {"replicas": target}},
                              Move(actor=USER, kind="scales", target=facts.name, detail=f"to {target} replicas",
                                   healthy=False), bounds, user_actions=1)
    yield from _safety_moves(node, bounds)
    yield from _promote(node, bounds)
    yield from _abort(node, bounds)
    if facts.has_partition:
        strategy = spec["updateStrategy"]
        key = str(KINDS[strategy["type"]].block)  # has_partition: a rolling kind, which has a block
        block = dict(strategy.get(key) or {})
        partition = int(block.get("partition") or 0)
        block["partition"] = 1 if partition == 0 else 0
        yield from _patch(node, {"spec": {"updateStrategy": {key: block}}},
                          Move(actor=USER, kind="sets the partition", target=facts.name,
                               detail=f"to {block['partition']}", healthy=False), bounds, user_actions=1)


def _promote(node: Node, bounds: Bounds) -> Iterator[Transition]:
    """``rollwise rollout promote`` (and ``--full``) at any state where a canary has a step left: the same status
    write the CLI makes (api/steps.py), spending a user action."""
    for full in (False, True):
        try:
            status = promoted_status(node.sts, full=full)
        except NothingToPromote:
            return
        yield from _write_status(node, bounds, status, Move(actor=USER, kind="promotes", target=node.facts.name,
                                                            detail="--full" if full else "one step", healthy=False))


def _abort(node: Node, bounds: Bounds) -> Iterator[Transition]:
    """``rollwise rollout abort`` at any state where a canary's rollout is under way (and not aborted already): the
    status write the CLI makes (api/abort.py), spending a user action. Offered for sets with canary steps, as
    promote is, so an exploration without steps keeps its state space."""
    if not set_steps(node.sts):
        return
    try:
        status = aborted_status(node.sts)
    except NothingToAbort:
        return
    yield from _write_status(node, bounds, status, Move(actor=USER, kind="aborts", target=node.facts.name,
                                                        detail="the rollout", healthy=False))


def _analysis_verdicts(node: Node, bounds: Bounds) -> Iterator[Transition]:
    """The AnalysisRun controller's verdict on each run that is still running: Successful, Failed or Inconclusive,
    each a nondeterministic choice at any state (the metrics are the world's). Spends no budget: a run comes to one
    verdict, and the runs are bounded by the rollouts and steps."""
    for run in node.cluster.list(ANALYSIS_RUN, NAMESPACE):
        if not still_running(run):
            continue
        for phase in OUTCOMES:
            cluster = node.cluster.fork()
            message = "" if phase == "Successful" else f"metric m {phase.lower()}: result 0.5"
            cluster.update_status({**run, "status": {"phase": phase, **({"message": message} if message else {})}},
                                  actor=ANALYSIS_CONTROLLER)
            move = Move(actor=ANALYSIS_CONTROLLER, kind="judges the analysis", target=name_of(run), detail=phase,
                        healthy=phase == "Successful")
            yield Transition(move=move, before=node, after=successor(node, cluster, move, bounds=bounds))


def _write_status(node: Node, bounds: Bounds, status: Obj, move: Move) -> Iterator[Transition]:
    """A user's write through the status subresource (promote, abort), spending a user action."""
    cluster = node.cluster.fork()
    try:
        cluster.update_status({**node.sts, "status": status}, actor=USER)
    except ApiStatusError:
        return
    yield Transition(move=move, before=node,
                     after=successor(node, cluster, move, bounds=bounds, used=spend(node.used, user_actions=1)))


def _safety_moves(node: Node, bounds: Bounds) -> Iterator[Transition]:
    """Issue 28's user actions: pause or resume the rollout, put a pre-delete hook on the set (or take it off), and
    put a PodDisruptionBudget over the set's pods."""
    facts, spec = node.facts, node.sts["spec"]
    if "pause" in bounds.safety_actions:
        paused = spec.get("paused") is True
        yield from _patch(node, {"spec": {"paused": None if paused else True}},
                          Move(actor=USER, kind="resumes" if paused else "pauses", target=facts.name,
                               healthy=False), bounds, user_actions=1)
    if "reserve" in bounds.safety_actions:
        span = node.in_range()
        reserved = spec.get("reserveOrdinals") or []
        if reserved or len(span) > 1:
            wanted = [] if reserved else [span[1]]
            yield from _patch(node, {"spec": {"reserveOrdinals": wanted}},
                              Move(actor=USER, kind="reserves ordinals", target=facts.name, detail=str(wanted),
                                   healthy=False), bounds, user_actions=1)
    if "hook" in bounds.safety_actions:
        hooked = spec.get("lifecycle") is not None
        hook = None if hooked else {"preDelete": {"labelsHandler": {HOOK_LABEL: HOOK_VALUE}}}
        yield from _patch(node, {"spec": {"lifecycle": hook}},
                          Move(actor=USER, kind=REMOVES_HOOK if hooked else ADDS_HOOK, target=facts.name,
                               detail=f"label {HOOK_LABEL}={HOOK_VALUE}", healthy=False), bounds, user_actions=1)
    if "pdb" in bounds.safety_actions and not node.cluster.list("PodDisruptionBudget", NAMESPACE):
        cluster = node.cluster.fork()
        cluster.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": facts.name, "namespace": NAMESPACE},
                        "spec": {"maxUnavailable": 1, "selector": spec["selector"]}}, actor=USER)
        move = Move(actor=USER, kind="creates a PodDisruptionBudget", target=facts.name, detail="maxUnavailable 1",
                    healthy=False)
        yield Transition(move=move, before=node,
                         after=successor(node, cluster, move, bounds=bounds, used=spend(node.used, user_actions=1)))


def _patch(node: Node, merge: dict[str, Any], move: Move, bounds: Bounds, **spent: int) -> Iterator[Transition]:
    cluster = node.cluster.fork()
    try:
        cluster.patch(node.facts.resource, NAMESPACE, node.facts.name, merge, actor=USER)
    except ApiStatusError:
        return  # refused by admission: a person would see the error and nothing changes
    yield Transition(move=move, before=node,
                     after=successor(node, cluster, move, bounds=bounds, used=spend(node.used, **spent)))
