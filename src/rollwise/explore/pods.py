"""Pod health as a handful of stages, and the status the kubelet would report for each (time abstracted).

The explorer's clock stands still at ``NOW``; what a duration would decide becomes an event instead. A pod is
``ready`` when its Ready condition turned True at ``NOW`` (so, with ``minReadySeconds`` > 0, not yet available) and
``available`` once the condition is dated far enough back. The shapes follow ``rollwise.kubelet.status``: phase,
the four pod conditions, and one status per container with its state and last termination.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.meta import Obj
from rollwise.invariants import stages
from rollwise.invariants.stages import AVAILABLE, CRASHING, CREATING, FAILED, PENDING, PULL_FAILING, READY, RUNNING

__all__ = ["NOW", "stage_of", "status_for"]

NOW = 1000.0
"""The explorer's frozen instant: every timestamp is ``NOW`` or derived from it."""


def stage_of(pod: Mapping[str, Any], min_ready_seconds: float) -> str:
    """The stage a pod's status shows at the explorer's ``NOW``."""
    return stages.stage_of(pod, min_ready_seconds, NOW)


def _condition(ctype: str, ok: bool, at: float, reason: str = "") -> Obj:
    cond: Obj = {"type": ctype, "status": "True" if ok else "False", "lastTransitionTime": at}
    if reason and not ok:
        cond["reason"] = reason
    return cond


def status_for(pod: Mapping[str, Any], stage: str, *, min_ready_seconds: float) -> Obj:
    """The pod status the kubelet reports in ``stage``; ``available`` dates Ready back past minReadySeconds."""
    ready = stage in (READY, AVAILABLE)
    ready_at = NOW - min_ready_seconds - 1.0 if stage == AVAILABLE else NOW
    running = stage in (RUNNING, READY, AVAILABLE)
    if stage == PENDING:
        return {**(pod.get("status") or {}), "phase": "Pending"}
    phase = {CREATING: "Pending", PULL_FAILING: "Pending", FAILED: "Failed"}.get(stage, "Running")
    statuses = []
    for c in (pod.get("spec") or {}).get("containers") or ():
        image = str(c.get("image", ""))
        # imageID once the image ran, as the kubelet reports it: what tells an in-place update is through.
        started = running or stage in (CRASHING, FAILED)
        cs: Obj = {"name": c.get("name", ""), "image": image, "imageID": f"sha256:{image}" if started else "",
                   "ready": ready, "restartCount": 1 if stage == CRASHING else 0, "started": running}
        if running:
            cs["state"] = {"running": {"startedAt": NOW}}
        elif stage == CRASHING:
            cs["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
            cs["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": NOW}}
        elif stage == FAILED:
            cs["state"] = {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": NOW}}
        else:
            cs["state"] = {"waiting": {"reason": "ImagePullBackOff" if stage == PULL_FAILING else "ContainerCreating"}}
        statuses.append(cs)
    return {
        **(pod.get("status") or {}),
        "phase": phase,
        "conditions": [
            _condition("PodScheduled", True, NOW),
            _condition("Initialized", True, NOW),
            _condition("ContainersReady", ready, ready_at, "ContainersNotReady"),
            _condition("Ready", ready, ready_at, "ContainersNotReady"),
        ],
        "containerStatuses": statuses,
    }
