"""Invariants as reusable functions (after upstream's assertMonotonicInvariants / assertUpdateInvariants).

Plan-level checks take the view a controller decided from and the plan it returned, and list what is wrong;
store-level checks take the cluster. Unit, property and scenario tests share them.
"""

from __future__ import annotations

from collections import Counter

from rollwise.api import predicates as p
from rollwise.api.identity import ordinal_of, ordinal_range, revision_of
from rollwise.api.intstr import resolve_max_unavailable
from rollwise.api.meta import controller_of, name_of
from rollwise.api.retention import retention_policy
from rollwise.cluster.memory import MemoryCluster
from rollwise.controllers.plan import CreatePod, DeletePod, Plan, WriteStatus
from rollwise.controllers.view import SetView


def _partition(view: SetView) -> int:
    strategy = view.set["spec"].get("updateStrategy") or {}
    block = strategy.get("rollingUpdate") or strategy.get("enforcedRollingUpdate")
    return int((block or {}).get("partition") or 0)


def ordered_creation(view: SetView, plan: Plan) -> list[str]:
    """OrderedReady creates ordinal k only when every in-range ordinal below it is Running, Ready and available."""
    if view.set["spec"].get("podManagementPolicy") == "Parallel":
        return []
    span = ordinal_range(view.set)
    mrs = float(view.set["spec"].get("minReadySeconds") or 0)
    by_ordinal = {ordinal_of(pod): pod for pod in view.pods}
    problems = []
    for create in plan.of_type(CreatePod):
        for lower in range(span.start, create.ordinal):
            pod = by_ordinal.get(lower)
            if pod is None or p.is_terminating(pod) or not p.is_available(pod, mrs, view.now):
                problems.append(f"t={view.now}: created ordinal {create.ordinal} while ordinal {lower} is not ready")
                break
    if len(plan.of_type(CreatePod)) > 1:
        problems.append(f"t={view.now}: OrderedReady created {len(plan.of_type(CreatePod))} pods in one reconcile")
    return problems


def partition_respected(view: SetView, plan: Plan) -> list[str]:
    """Pods below the partition are deleted only when they failed or are out of range, never by the update."""
    span = ordinal_range(view.set)
    floor = span.start + _partition(view)
    pods = {name_of(pod): pod for pod in view.pods}
    problems = []
    for delete in plan.of_type(DeletePod):
        pod = pods.get(delete.name)
        if pod is None:
            continue
        o = ordinal_of(pod)
        if o in span and o < floor and not (p.is_failed(pod) or p.is_succeeded(pod)):
            problems.append(f"t={view.now}: deleted {delete.name} below partition {floor}: {delete.reason}")
    return problems


def status_bounds(view: SetView, plan: Plan) -> list[str]:
    """Status counters stay within the API server's rules (reference §1.2 ValidateStatefulSetStatus)."""
    problems = []
    for write in plan.of_type(WriteStatus):
        s = write.status
        if "replicas" not in s:
            continue
        counts = {k: s.get(k, 0) for k in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                                           "availableReplicas")}
        if min(counts.values()) < 0:
            problems.append(f"t={view.now}: negative counter in {counts}")
        for k in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
            if counts[k] > counts["replicas"]:
                problems.append(f"t={view.now}: {k} {counts[k]} > replicas {counts['replicas']}")
        if counts["availableReplicas"] > counts["readyReplicas"]:
            problems.append(f"t={view.now}: availableReplicas > readyReplicas in {counts}")
    return problems


def budget_respected(view: SetView, plan: Plan) -> list[str]:
    """With maxUnavailable on, the controller's own deletions never take more than maxUnavailable in-range ordinals
    below available (KEP-961): deleting an available pod needs a free slot in the budget."""
    strategy = view.set["spec"].get("updateStrategy") or {}
    kind = strategy.get("type")
    if kind not in ("RollingUpdate", "EnforcedRollingUpdate") or not view.gates.max_unavailable:
        return []
    if kind == "EnforcedRollingUpdate" and not view.gates.enforced_rolling_update:
        return []
    block = strategy.get("rollingUpdate") or strategy.get("enforcedRollingUpdate")
    replicas = int(view.set["spec"].get("replicas", 1))
    budget = resolve_max_unavailable((block or {}).get("maxUnavailable"), replicas) if block is not None else 1
    span = ordinal_range(view.set)
    mrs = float(view.set["spec"].get("minReadySeconds") or 0)
    by_ordinal = {ordinal_of(pod): pod for pod in view.pods}
    unavailable = sum(p.is_unavailable(by_ordinal.get(o), mrs, view.now) for o in span)
    deleted = {d.name for d in plan.of_type(DeletePod)}
    taken = [pod for o, pod in by_ordinal.items()
             if o in span and name_of(pod) in deleted and not p.is_unavailable(pod, mrs, view.now)]
    if taken and unavailable + len(taken) > budget:
        return [f"t={view.now}: deleted {len(taken)} available pods with {unavailable} already unavailable "
                f"(maxUnavailable {budget})"]
    return []


def recreate_never_mixes(view: SetView, plan: Plan) -> list[str]:
    """Under Recreate, no pod is created while any pod of another revision exists, even terminating (seed 000)."""
    strategy = view.set["spec"].get("updateStrategy") or {}
    if strategy.get("type") != "Recreate" or not view.gates.recreate:
        return []
    creates = plan.of_type(CreatePod)
    if not creates:
        return []
    update = creates[0].revision
    old = [name_of(pod) for pod in view.pods if revision_of(pod) != update]
    return [f"t={view.now}: created {[c.pod['metadata']['name'] for c in creates]} while {old} exist"] if old else []


def no_churn(view: SetView, plan: Plan) -> list[str]:
    """An in-range pod that has not failed is never deleted when its replacement would come back at its own
    revision (it would be deleted again at once). Without a rollingUpdate block upstream recreates ordinals below
    status.currentReplicas at the current revision; once the pod is gone that count is the other non-terminating
    pods at the current revision."""
    strategy = view.set["spec"].get("updateStrategy") or {}
    if strategy.get("type") not in ("RollingUpdate", "EnforcedRollingUpdate"):
        return []
    if strategy.get("rollingUpdate") or strategy.get("enforcedRollingUpdate"):
        return []
    status = view.set.get("status") or {}
    current = status.get("currentRevision")
    if not current or current == status.get("updateRevision"):
        return []
    span = ordinal_range(view.set)
    deleted = {d.name for d in plan.of_type(DeletePod)}
    problems = []
    for pod in view.pods:
        if name_of(pod) not in deleted or ordinal_of(pod) not in span or revision_of(pod) != current:
            continue
        if p.is_failed(pod) or p.is_succeeded(pod):
            continue
        remaining = sum(1 for other in view.pods if other is not pod and revision_of(other) == current
                        and not p.is_terminating(other) and name_of(other) not in deleted)
        if ordinal_of(pod) < span.start + remaining:
            problems.append(f"t={view.now}: deleted {name_of(pod)}, which would come back at revision {current}")
    return problems


PLAN_CHECKS = (ordered_creation, partition_respected, status_bounds, budget_respected, recreate_never_mixes, no_churn)


def one_pod_per_ordinal(cluster: MemoryCluster) -> list[str]:
    """No two pods of a set claim one ordinal (by the pod-index label or the name)."""
    seen: Counter[tuple[str, int]] = Counter()
    for pod in cluster.list("Pod"):
        ref = controller_of(pod)
        if ref is not None:
            seen[(ref["name"], ordinal_of(pod))] += 1
    return [f"{owner} has {n} pods at ordinal {o}" for (owner, o), n in seen.items() if n > 1]


def claims_kept_under_retain(cluster: MemoryCluster, created: set[str]) -> list[str]:
    """Under Retain/Retain every claim ever created still exists."""
    sets = cluster.list("StatefulSet")
    if not all(retention_policy(s) == ("Retain", "Retain") for s in sets):
        return []
    present = {name_of(c) for c in cluster.list("PersistentVolumeClaim")}
    return [f"claim {c} was deleted under Retain" for c in sorted(created - present)]
