"""The ReplicaSet controller (and the ReplicationController's, the same rule over a map selector), as pure
decision: keep ``spec.replicas`` active pods matching the selector, and report what they are.

Upstream ``pkg/controller/replicaset/replica_set.go``: pods matching the selector with no controller are adopted;
too few active pods are created from the template (upstream caps a burst at 500); too many are deleted, the least
far along first (``getPodsToDelete``: unscheduled before scheduled, pending before running, not ready before
ready, then the most recently ready, then the newest); the status counts replicas, fully labelled, ready and
available pods (ready for ``minReadySeconds``), with the generation it saw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rollwise.api.meta import (
    Obj,
    controller_of,
    is_controlled_by,
    name_of,
    namespace_of,
    owner_reference,
    selector_matches,
    uid_of,
)
from rollwise.api.predicates import available_at, is_available, is_ready, is_running, is_terminating, ready_since
from rollwise.controllers.workload import Create, Delete, Update, UpdateStatus, WorkloadPlan, child_name, stamped

__all__ = ["BURST", "ReplicaSetView", "reconcile", "selector_of"]

BURST = 500


@dataclass(frozen=True, slots=True)
class ReplicaSetView:
    rs: Obj
    pods: Sequence[Obj]
    """The pods of the set's namespace (the controller keeps those it owns or may adopt)."""
    now: float


def selector_of(rs: Mapping[str, Any]) -> dict[str, Any]:
    """A LabelSelector: a ReplicaSet's own, or a ReplicationController's map as ``matchLabels``."""
    selector = (rs.get("spec") or {}).get("selector") or {}
    if rs.get("kind") == "ReplicationController":
        return {"matchLabels": dict(selector)} if selector else {}
    return dict(selector)


def _active(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return not is_terminating(pod) and phase not in ("Succeeded", "Failed")


def _deletion_rank(pod: Obj) -> tuple[Any, ...]:
    """Smaller goes first (upstream ``ActivePodsWithRanks``, without the co-location rank)."""
    scheduled = bool((pod.get("spec") or {}).get("nodeName"))
    phase = (pod.get("status") or {}).get("phase")
    since = ready_since(pod)
    created = float(pod["metadata"].get("creationTimestamp") or 0)
    return (scheduled, phase == "Running", is_ready(pod), -(since or 0.0), -created, name_of(pod))


def reconcile(view: ReplicaSetView) -> WorkloadPlan:
    rs = view.rs
    plan = WorkloadPlan()
    if rs["metadata"].get("deletionTimestamp") is not None:
        return plan
    spec = rs.get("spec") or {}
    selector = selector_of(rs)
    template = spec.get("template") or {}
    replicas = int(spec.get("replicas", 1) or 0)
    min_ready = float(spec.get("minReadySeconds") or 0)
    owned: list[Obj] = []
    for pod in view.pods:
        labels = pod["metadata"].get("labels") or {}
        if is_controlled_by(pod, rs):
            if selector_matches(selector, labels):
                owned.append(pod)
            else:  # no longer matches: released, as upstream's ClaimPods does
                refs = [r for r in pod["metadata"].get("ownerReferences") or () if r.get("uid") != uid_of(rs)]
                plan.actions.append(Update({**pod, "metadata": {**pod["metadata"], "ownerReferences": refs}},
                                           reason="Released"))
        elif controller_of(pod) is None and _active(pod) and selector_matches(selector, labels):
            refs = [*(pod["metadata"].get("ownerReferences") or ()), owner_reference(rs)]
            plan.actions.append(Update({**pod, "metadata": {**pod["metadata"], "ownerReferences": refs}},
                                       reason="Adopted"))
            owned.append(pod)
    active = [p for p in owned if _active(p)]
    diff = len(active) - replicas
    if diff < 0:
        taken = {name_of(p) for p in view.pods}
        for i in range(min(-diff, BURST)):
            name = child_name(rs, taken, seed=len(owned) + i)
            taken.add(name)
            plan.actions.append(Create(stamped(rs, template, name), reason="SuccessfulCreate"))
    elif diff > 0:
        for pod in sorted(active, key=_deletion_rank)[:diff]:
            plan.actions.append(Delete("", "Pod", namespace_of(pod), name_of(pod), uid_of(pod),
                                       reason="SuccessfulDelete"))
    template_labels = (template.get("metadata") or {}).get("labels") or {}
    status: dict[str, Any] = {
        "replicas": len(active),
        "fullyLabeledReplicas": sum(1 for p in active if all(
            (p["metadata"].get("labels") or {}).get(k) == v for k, v in template_labels.items())),
        "readyReplicas": sum(1 for p in active if is_ready(p) and is_running(p)),
        "availableReplicas": sum(1 for p in active if is_available(p, min_ready, view.now)),
        "observedGeneration": rs["metadata"].get("generation", 1),
    }
    terminating = sum(1 for p in owned if is_terminating(p))
    if terminating:
        status["terminatingReplicas"] = terminating
    for pod in active:
        at = available_at(pod, min_ready)
        if at is not None and at >= view.now:
            plan.wake(at - view.now + 0.001)
    old = rs.get("status") or {}
    kept = {k: v for k, v in old.items() if k == "conditions"}
    new_status = {**kept, **{k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}}
    if new_status != old:
        plan.actions.append(UpdateStatus({**rs, "status": new_status}))
    return plan
