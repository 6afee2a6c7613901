"""The Deployment controller, as pure decision: one ReplicaSet per pod template, scaled by the strategy, and the
status `kubectl rollout status` and "wait for Available" read.

Upstream ``pkg/controller/deployment``: the new ReplicaSet is the one whose template (without the
``pod-template-hash`` label) equals the Deployment's; it is created, named ``<deployment>-<hash>``, with the
next revision. RollingUpdate (``rolling.go``) scales the new set up while all sets together stay within
``replicas + maxSurge`` (a percent rounds up), and old sets down while the available pods stay at least
``replicas - maxUnavailable`` (a percent rounds down; both zero means one unavailable), unhealthy old pods first.
Recreate (``recreate.go``) scales every old set to zero, waits until their pods are gone, then scales the new one
up. Old sets with no replicas beyond ``revisionHistoryLimit`` are deleted. The status sums the sets; the
conditions are Available (at least ``replicas - maxUnavailable`` available) and Progressing (with
``progressDeadlineSeconds``, ``ProgressDeadlineExceeded`` once no progress was made for that long).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rollwise.api.intstr import scaled_value
from rollwise.api.meta import LAST_APPLIED, Obj, is_controlled_by, name_of, namespace_of, owner_reference, uid_of
from rollwise.controllers.workload import Create, Delete, Update, UpdateStatus, WorkloadPlan, pod_template_hash

__all__ = ["REVISION", "DeploymentView", "reconcile"]

REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
HASH_LABEL = "pod-template-hash"


@dataclass(frozen=True, slots=True)
class DeploymentView:
    deployment: Obj
    replica_sets: Sequence[Obj]
    """The ReplicaSets of the Deployment's namespace (the controller keeps those it controls)."""
    pods: Sequence[Obj]
    """The pods of the Deployment's namespace (Recreate waits for the old ones to be gone)."""
    now: float


def _replicas(rs: Mapping[str, Any]) -> int:
    return int((rs.get("spec") or {}).get("replicas") or 0)


def _available(rs: Mapping[str, Any]) -> int:
    return int((rs.get("status") or {}).get("availableReplicas") or 0)


def _revision(rs: Mapping[str, Any]) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def _without_hash(template: Mapping[str, Any]) -> dict[str, Any]:
    meta = dict(template.get("metadata") or {})
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k != HASH_LABEL}
    if labels:
        meta["labels"] = labels
    else:
        meta.pop("labels", None)
    return {**template, "metadata": meta}


def _budgets(spec: Mapping[str, Any], replicas: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a RollingUpdate (upstream ``ResolveFenceposts``)."""
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    surge = scaled_value(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    unavailable = scaled_value(rolling.get("maxUnavailable", "25%"), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _scaled(rs: Obj, replicas: int, deployment: Obj, max_replicas: int) -> Update:
    annotations = {**(rs["metadata"].get("annotations") or {}), DESIRED: str(_replicas(deployment)),
                   MAX_REPLICAS: str(max_replicas)}
    return Update({**rs, "metadata": {**rs["metadata"], "annotations": annotations},
                   "spec": {**(rs.get("spec") or {}), "replicas": replicas}},
                  reason="ScalingReplicaSet")


def _new_replica_set(d: Obj, template: Mapping[str, Any], revision: int, replicas: int, max_replicas: int,
                     collisions: int) -> Obj:
    h = pod_template_hash(_without_hash(template), collisions)
    meta = dict(template.get("metadata") or {})
    labels = {**(meta.get("labels") or {}), HASH_LABEL: h}
    selector = dict((d.get("spec") or {}).get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: h}
    annotations = {**(d["metadata"].get("annotations") or {}), REVISION: str(revision),
                   DESIRED: str(_replicas(d)), MAX_REPLICAS: str(max_replicas)}
    annotations.pop(LAST_APPLIED, None)
    spec = d.get("spec") or {}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{name_of(d)}-{h}", "namespace": namespace_of(d), "labels": labels,
                         "annotations": annotations, "ownerReferences": [owner_reference(d)]},
            "spec": {"replicas": replicas, "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                     "selector": selector, "template": {**template, "metadata": {**meta, "labels": labels}}}}


def reconcile(view: DeploymentView) -> WorkloadPlan:
    d = view.deployment
    plan = WorkloadPlan()
    if d["metadata"].get("deletionTimestamp") is not None:
        return plan
    spec = d.get("spec") or {}
    replicas = int(spec.get("replicas", 1) or 0)
    template = spec.get("template") or {}
    owned = sorted((rs for rs in view.replica_sets if is_controlled_by(rs, d)),
                   key=lambda rs: (_revision(rs), float(rs["metadata"].get("creationTimestamp") or 0)))
    new = next((rs for rs in owned if _without_hash((rs.get("spec") or {}).get("template") or {})
                == _without_hash(template)), None)
    old = [rs for rs in owned if rs is not new]
    recreate = (spec.get("strategy") or {}).get("type") == "Recreate"
    surge, unavailable = (0, replicas) if recreate else _budgets(spec, replicas)
    paused = bool(spec.get("paused"))
    if new is None and not paused:
        revision = max((_revision(rs) for rs in owned), default=0) + 1
        old_total = sum(_replicas(rs) for rs in old)
        start = 0 if recreate and old_total else (
            replicas if not old_total else max(0, min(replicas, replicas + surge - old_total)))
        collisions = int((d.get("status") or {}).get("collisionCount") or 0)
        plan.actions.append(Create(_new_replica_set(d, template, revision, start, replicas + surge, collisions),
                                   reason="ScalingReplicaSet"))
        _status(view, plan, None, old, unavailable, created=True)
        return plan
    if new is not None and not paused:
        _rollout(view, plan, new, old, replicas, surge, unavailable, recreate)
        if str(_revision(new)) != (d["metadata"].get("annotations") or {}).get(REVISION):
            annotations = {**(d["metadata"].get("annotations") or {}), REVISION: str(_revision(new))}
            plan.actions.append(Update({**d, "metadata": {**d["metadata"], "annotations": annotations}}))
        _clean_history(plan, old, int(spec.get("revisionHistoryLimit", 10)))
    _status(view, plan, new, old, unavailable, created=False)
    return plan


def _rollout(view: DeploymentView, plan: WorkloadPlan, new: Obj, old: list[Obj], replicas: int, surge: int,
             unavailable: int, recreate: bool) -> None:
    d = view.deployment
    max_total = replicas + surge
    if recreate:
        if any(_replicas(rs) for rs in old):
            for rs in old:
                if _replicas(rs):
                    plan.actions.append(_scaled(rs, 0, d, max_total))
            return
        old_uids = {uid_of(rs) for rs in old}
        if any(any(r.get("uid") in old_uids for r in p["metadata"].get("ownerReferences") or ())
               for p in view.pods):
            return  # Recreate: the new pods wait until every old one is gone
        if _replicas(new) != replicas:
            plan.actions.append(_scaled(new, replicas, d, max_total))
        return
    active_old = [rs for rs in old if _replicas(rs)]
    if not active_old:
        if _replicas(new) != replicas:
            plan.actions.append(_scaled(new, replicas, d, max_total))
        return
    total = _replicas(new) + sum(_replicas(rs) for rs in active_old)
    if _replicas(new) < replicas and total < max_total:
        plan.actions.append(_scaled(new, min(replicas, _replicas(new) + max_total - total), d, max_total))
        return
    if _replicas(new) > replicas:
        plan.actions.append(_scaled(new, replicas, d, max_total))
        return
    # Scale old sets down: never below replicas - maxUnavailable available pods, unhealthy pods first.
    min_available = replicas - unavailable
    new_unavailable = max(0, _replicas(new) - _available(new))
    budget = total - min_available - new_unavailable
    if budget <= 0:
        return
    targets = {uid_of(rs): _replicas(rs) for rs in active_old}
    for rs in active_old:
        cut = min(budget, _replicas(rs) - _available(rs))
        if cut > 0:
            targets[uid_of(rs)] -= cut
            budget -= cut
    available = _available(new) + sum(min(_available(rs), targets[uid_of(rs)]) for rs in active_old)
    spare = available - min_available
    for rs in active_old:
        cut = min(spare, targets[uid_of(rs)])
        if cut > 0:
            targets[uid_of(rs)] -= cut
            spare -= cut
    for rs in active_old:
        if targets[uid_of(rs)] != _replicas(rs):
            plan.actions.append(_scaled(rs, targets[uid_of(rs)], d, max_total))


def _clean_history(plan: WorkloadPlan, old: list[Obj], limit: int) -> None:
    idle = [rs for rs in old if not _replicas(rs) and not (rs.get("status") or {}).get("replicas")]
    for rs in idle[:max(0, len(idle) - limit)]:
        plan.actions.append(Delete("apps", "ReplicaSet", namespace_of(rs), name_of(rs), uid_of(rs)))


def _condition(old: Sequence[Mapping[str, Any]], kind: str, status: str, reason: str, message: str,
               now: float) -> dict[str, Any]:
    before = next((c for c in old if c.get("type") == kind), None)
    same = before is not None and before.get("status") == status
    unchanged = same and before is not None and before.get("reason") == reason
    return {"type": kind, "status": status,
            "lastUpdateTime": before.get("lastUpdateTime", now) if unchanged and before else now,
            "lastTransitionTime": before.get("lastTransitionTime", now) if same and before else now,
            "reason": reason, "message": message}


def _status(view: DeploymentView, plan: WorkloadPlan, new: Obj | None, old: list[Obj], unavailable: int, *,
            created: bool) -> None:
    d = view.deployment
    spec = d.get("spec") or {}
    replicas = int(spec.get("replicas", 1) or 0)
    sets = [*old, *([new] if new is not None else [])]
    total = sum(int((rs.get("status") or {}).get("replicas") or 0) for rs in sets)
    ready = sum(int((rs.get("status") or {}).get("readyReplicas") or 0) for rs in sets)
    available = sum(_available(rs) for rs in sets)
    updated = int(((new or {}).get("status") or {}).get("replicas") or 0)
    before = d.get("status") or {}
    old_conditions = before.get("conditions") or ()
    now = view.now
    if available >= replicas - unavailable:
        avail = _condition(old_conditions, "Available", "True", "MinimumReplicasAvailable",
                           "Deployment has minimum availability.", now)
    else:
        avail = _condition(old_conditions, "Available", "False", "MinimumReplicasUnavailable",
                           "Deployment does not have minimum availability.", now)
    template_hash = pod_template_hash(_without_hash(spec.get("template") or {}))
    rs_name = name_of(new) if new is not None else f"{name_of(d)}-{template_hash}"
    complete = (new is not None and updated == replicas and available == replicas and total == replicas
                and _available(new) == replicas)
    deadline = spec.get("progressDeadlineSeconds")
    progressing_before = next((c for c in old_conditions if c.get("type") == "Progressing"), None)
    if spec.get("paused"):
        prog = _condition(old_conditions, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused", now)
    elif complete:
        prog = _condition(old_conditions, "Progressing", "True", "NewReplicaSetAvailable",
                          f'ReplicaSet "{rs_name}" has successfully progressed.', now)
    elif created:
        prog = _condition(old_conditions, "Progressing", "True", "NewReplicaSetCreated",
                          f'Created new replica set "{rs_name}"', now)
    else:
        prog = _condition(old_conditions, "Progressing", "True", "ReplicaSetUpdated",
                          f'ReplicaSet "{rs_name}" is progressing.', now)
        progressed = (total, updated, ready, available) != tuple(
            int(before.get(k) or 0) for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"))
        if not progressed and progressing_before is not None:
            if progressing_before.get("reason") == "ProgressDeadlineExceeded":
                prog = dict(progressing_before)
            else:
                prog["lastUpdateTime"] = progressing_before.get("lastUpdateTime", now)
                prog["lastTransitionTime"] = progressing_before.get("lastTransitionTime", now)
        if isinstance(deadline, int) and prog.get("reason") != "ProgressDeadlineExceeded":
            due = float(prog["lastUpdateTime"]) + deadline
            if due <= now:
                prog = _condition(old_conditions, "Progressing", "False", "ProgressDeadlineExceeded",
                                  f'ReplicaSet "{rs_name}" has timed out progressing.', now)
            else:
                plan.wake(due - now + 0.001)
    status: dict[str, Any] = {"observedGeneration": d["metadata"].get("generation", 1)}
    for key, value in (("replicas", total), ("updatedReplicas", updated), ("readyReplicas", ready),
                       ("availableReplicas", available), ("unavailableReplicas", max(0, replicas - available))):
        if value:
            status[key] = value
    status["conditions"] = [avail, prog]
    if before.get("collisionCount"):
        status["collisionCount"] = before["collisionCount"]
    if status != before:
        plan.actions.append(UpdateStatus({**d, "status": status}))
