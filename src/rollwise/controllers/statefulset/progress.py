"""``Progressing`` and ``Available`` conditions for every strategy, and ``progressDeadlineSeconds``.

Following Kubernetes condition conventions and Deployments' semantics (KEP-3541 adds ``Progressing`` to
StatefulSets; "progress is considered when a new pod is created, deleted, or becomes ready"):

- ``Progressing=True`` while a rollout or scale moves, with a message saying in plain words what it waits for
  (``waiting for web-3 to become available: container app is CrashLoopBackOff``), and ``lastUpdateTime`` marking
  the last progress; ``reason`` ``RolloutInProgress`` (``RecreateInProgress`` under Recreate).
- ``Progressing=True, reason RolloutComplete`` (``RecreateComplete``) once every ordinal runs the update revision
  and is available; ``PartitionRolledOut`` when a partition holds the ordinals below it at their revision and
  every ordinal from the partition up is updated and available (what was asked is done).
- ``Progressing=False, reason ProgressDeadlineExceeded`` when ``spec.progressDeadlineSeconds`` pass without
  progress. It deletes nothing: it is a signal (a CI pipeline can fail fast on it). OnDelete has no deadline —
  nothing moves there until a person deletes a pod.
- ``Progressing=False, reason SafetyHalt`` while EnforcedRollingUpdate's safety halt holds.
- Progress is a pod becoming Ready or available, a new update revision, or a step the controller takes forward (a
  pod created or deleted) — not podProgressTimeoutSeconds retrying the same pod at the update revision
  (``Sync.retried``): a retry neither resets the deadline nor turns an exceeded one back to True, so
  ``ProgressDeadlineExceeded`` fires once per stall and an alert on ``Progressing=False`` does not flap.
- ``Progressing=Unknown, reason RolloutPaused`` while ``spec.paused`` is true (Deployment's ``DeploymentPaused``):
  the deadline does not run, and the first reconcile after a resume starts its clock afresh (pause.py).
- ``Available``: at least ``replicas - maxUnavailable`` replicas available.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.conditions import condition_of
from rollwise.api.meta import Obj, name_of
from rollwise.api.rollout import PARTITION_ROLLED_OUT, ROLLOUT_COMPLETE
from rollwise.api.rollout import rollout_complete as is_rollout_complete
from rollwise.api.strategies import ON_DELETE, RECREATE
from rollwise.controllers.plan import CreatePod, DeletePod, InPlaceUpdatePod, MarkPreparingDelete
from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.pause import ROLLOUT_PAUSED

__all__ = ["progress_conditions", "rollout_complete"]

_COUNTERS = ("readyReplicas", "availableReplicas")
"""Counters whose rise is progress: a pod became Ready or available. A fall is not progress, and the pod counts
(``replicas``, ``updatedReplicas``) move with creations and deletions, which the plan's actions show."""


def rollout_complete(sync: Sync) -> bool:
    """The shared rule (``api/rollout.py``) over this reconcile's slots, counting this plan's deletions."""
    floor = sync.floor
    if sync.quiet_deleted() or sync.quiet_outdated_alive(floor):
        return False  # a quiet pod being deleted, or one at the current revision the update must still replace
    return is_rollout_complete(sync.replicas, outside_range=len(sync.condemned), floor=floor,
                               update_revision=sync.update_name, min_ready_seconds=sync.min_ready_seconds,
                               now=sync.now, deleting=sync.deleted, indexes=sync.census.loud)


def _steps_forward(sync: Sync, action: object) -> bool:
    """A creation or deletion that is not a retry of a pod podProgressTimeoutSeconds is cycling."""
    if isinstance(action, CreatePod):
        return name_of(action.pod) not in sync.retried
    if isinstance(action, DeletePod):
        return action.name not in sync.retried or action.revision != sync.update_name
    return isinstance(action, (InPlaceUpdatePod, MarkPreparingDelete))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _paused_message(sync: Sync, status: Obj, replicas: int) -> str:
    held = next((b.cause for b in sync.blocked if b.cause.startswith("rollout paused")), None)
    counts = (f"{status.get('updatedReplicas', 0)} of {replicas} replicas at revision {sync.update_name}, "
              f"{status.get('availableReplicas', 0)} available")
    return f"{held}; {counts}" if held else f"rollout paused (spec.paused): {counts}"


def progress_conditions(sync: Sync, status: Obj, old_status: dict[str, Any]) -> list[Obj]:
    """The owned conditions for this reconcile; also records events and the deadline wake-up on ``sync``."""
    now = sync.now
    old = condition_of(old_status.get("conditions") or [], "Progressing")
    recreate = sync.update_type == RECREATE
    progressed = (
        any(_steps_forward(sync, a) for a in sync.actions)
        or any(_count(old_status.get(k)) < _count(status.get(k)) for k in _COUNTERS)
        or old_status.get("updateRevision") != status.get("updateRevision")
    )
    last = old.get("lastUpdateTime") if old is not None else None
    was_paused = old is not None and old.get("reason") == ROLLOUT_PAUSED
    if progressed or last is None or (old is not None and old.get("reason") == "InvalidSpec") \
            or was_paused != sync.paused:
        # A resume restarts the deadline's clock, as a Deployment's does; a pause dates the condition once. While
        # the pause lasts the time stays (Deployment's SetDeploymentCondition keeps a condition whose status and
        # reason are unchanged): set to now on every reconcile, each status write woke the informer into the next.
        last = now
    replicas = int(sync.spec.get("replicas", 1))
    updated = int(status.get("updatedReplicas", 0))
    if rollout_complete(sync) and not recreate and sync.floor > 0 and updated < replicas:
        # Held at the partition on purpose (a canary): what was asked is done; Ready agrees (readiness.py).
        progressing = {"type": "Progressing", "status": "True", "reason": PARTITION_ROLLED_OUT,
                       "message": f"{updated} of {replicas} replicas at revision {sync.update_name}: every ordinal "
                                  f"from the partition ({sync.floor}) up; the {replicas - updated} below it stay at "
                                  f"revision {sync.current_name} until the partition is lowered"}
    elif rollout_complete(sync):
        reason = "RecreateComplete" if recreate else ROLLOUT_COMPLETE
        progressing = {"type": "Progressing", "status": "True", "reason": reason,
                       "message": f"{replicas} replicas available at revision {sync.update_name}"}
        if recreate and old is not None and old.get("reason") == "RecreateInProgress":
            sync.event("RecreateComplete", f"All {replicas} pods run revision {sync.update_name}")
    elif sync.halted is not None:
        progressing = {"type": "Progressing", "status": "False", "reason": sync.halt_reason,
                       "message": sync.halted}
    else:
        message = str(sync.blocked[0]) if sync.blocked else (
            f"{status.get('updatedReplicas', 0)} of {replicas} replicas at revision {sync.update_name}, "
            f"{status.get('availableReplicas', 0)} available")
        deadline = sync.spec.get("progressDeadlineSeconds")
        progressing = {"type": "Progressing", "status": "True",
                       "reason": "RecreateInProgress" if recreate else "RolloutInProgress", "message": message}
        if deadline and sync.update_type != ON_DELETE and not sync.paused:
            if now - float(last) > float(deadline):
                progressing = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                               "message": f"no progress for {deadline} s: {message}"}
                if old is None or old.get("reason") != "ProgressDeadlineExceeded":
                    sync.event("ProgressDeadlineExceeded",
                               f"StatefulSet has not progressed for {deadline} s: {message}", warning=True)
            else:
                sync.requeue_at(float(last) + float(deadline) + 1e-3)
    if sync.paused:
        sync.unpaused_progressing = progressing
        progressing = {"type": "Progressing", "status": "Unknown", "reason": ROLLOUT_PAUSED,
                       "message": _paused_message(sync, status, replicas)}
    condition: Obj = {**progressing, "lastUpdateTime": last}
    budget = sync.budget
    available = int(status.get("availableReplicas", 0))
    ok = available >= replicas - budget
    available_condition = {
        "type": "Available", "status": "True" if ok else "False",
        "reason": "MinimumReplicasAvailable" if ok else "MinimumReplicasUnavailable",
        "message": f"{available} of {replicas} replicas available (maxUnavailable {budget})",
    }
    return [condition, available_condition]

