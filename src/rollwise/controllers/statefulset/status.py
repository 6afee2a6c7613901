"""The set's status, computed fresh on every reconcile and written only when it changed (reference §1.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api import predicates as p
from rollwise.api.identity import revision_of
from rollwise.api.meta import Obj
from rollwise.controllers.statefulset.context import Sync

__all__ = ["compute_status", "status_changed"]

_COMPARED = (
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "availableReplicas",
    "currentRevision",
    "updateRevision",
    "collisionCount",
    "conditions",
    "labelSelector",
    "volumeClaimTemplates",  # KEP-4650's per-template claim report (claim_updates.py)
    "currentStepIndex", "pauseStartTime", "stableRevision", "promoteFull",  # canary steps (steps.py)
    "currentStepAnalysisRun", "rolloutAttempt",
    "abort", "abortedRevision", "abortMessage",  # an aborted rollout (api/abort.py)
)


def compute_status(sync: Sync, conditions: list[Obj]) -> Obj:
    """Counters over the set's pods as they stand after this plan (pods it deletes count as terminating).

    Pods created by this plan do not count yet (their phase is unknown until the API answers), as upstream's
    placeholders. ``currentRevision`` is promoted once every replica is updated, Ready *and available* — the
    correct behaviour of open bug #136831 — for every strategy, OnDelete included (#136833).
    """
    # Quiet pods are created, Ready and available; those this plan deletes are terminating (census.py).
    quiet = len(sync.census.slots) - len(sync.census.loud)
    updated = sync.quiet_updated_alive()
    outdated = sync.quiet_outdated_alive()
    current, update = sync.current_name, sync.update_name
    replicas = quiet
    ready_count = available_count = quiet - (sync.quiet_in_place() if sync.in_place else 0)
    for i in sync.quiet_marked():  # marked by this plan: still running at its revision (hooks.py)
        pod = sync.census.slots[i]
        if pod is not None:
            outdated += sync.outdated(pod)
            updated += not sync.outdated(pod)
    current_count = updated if current == update else outdated
    updated_count = updated
    for pod in sync.unquiet_pods():
        if not p.is_created(pod):
            continue
        replicas += 1
        ready, available = sync.health(pod)
        if ready:
            ready_count += 1
            available_count += available
        if not sync.deleting(pod):
            rev = revision_of(pod)
            current_count += rev == current
            updated_count += rev == update
    want = int(sync.spec.get("replicas", 1))
    if updated_count == want and ready_count == want and available_count == want and replicas == want:
        current_count = updated_count
        current = update
    counts = {"replicas": replicas, "readyReplicas": ready_count, "availableReplicas": available_count,
              "currentReplicas": current_count, "updatedReplicas": updated_count}
    status: Obj = {
        "observedGeneration": int(sync.sts["metadata"].get("generation", 1)),
        **counts,
        "currentRevision": current,
        "updateRevision": sync.update_name,
        "collisionCount": sync.collision_count,
    }
    if conditions:
        status["conditions"] = conditions
    return status


def status_changed(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether a status write is needed: a newer generation, or any counter, revision or condition differs."""
    old = old or {}
    for k in _COMPARED:  # noqa: SIM110 - a loop, not any() over a generator: asked on every reconcile
        if old.get(k) != new.get(k):
            return True
    return False
