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
    both = sync.current_name == sync.update_name
    counts = {"replicas": quiet, "readyReplicas": quiet, "availableReplicas": quiet,
              "currentReplicas": updated if both else outdated, "updatedReplicas": updated}
    for pod in sync.unquiet_pods():
        if not p.is_created(pod):
            continue
        counts["replicas"] += 1
        ready, available = sync.health(pod)
        if ready:
            counts["readyReplicas"] += 1
            if available:
                counts["availableReplicas"] += 1
        if not sync.terminating(pod):
            rev = revision_of(pod)
            counts["currentReplicas"] += rev == sync.current_name
            counts["updatedReplicas"] += rev == sync.update_name
    current = sync.current_name
    want = int(sync.spec.get("replicas", 1))
    if (
        counts["updatedReplicas"] == want
        and counts["readyReplicas"] == want
        and counts["availableReplicas"] == want
        and counts["replicas"] == want
    ):
        counts["currentReplicas"] = counts["updatedReplicas"]
        current = sync.update_name
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
    return any(old.get(k) != new.get(k) for k in _COMPARED)
