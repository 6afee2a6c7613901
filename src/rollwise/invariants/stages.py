"""A pod's health in one word (the explorer's stages), for a violation's message and the explorer's state key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api import predicates as p

__all__ = [
    "AVAILABLE",
    "CRASHING",
    "CREATING",
    "FAILED",
    "PENDING",
    "PULL_FAILING",
    "READY",
    "RUNNING",
    "STAGES",
    "image_of",
    "stage_of",
]

PENDING = "pending"
"""Created, no status from the kubelet yet (not scheduled, or the kubelet has not reported)."""
CREATING = "creating"
"""The kubelet reports the container as ContainerCreating."""
RUNNING = "running"
READY = "ready"
AVAILABLE = "available"
CRASHING = "crashing"
PULL_FAILING = "pull-failing"
FAILED = "failed"
STAGES = (PENDING, CREATING, RUNNING, READY, AVAILABLE, CRASHING, PULL_FAILING, FAILED)


def image_of(pod: Mapping[str, Any]) -> str:
    """The first container's image (of a pod, or of a template)."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    return str(containers[0].get("image", ""))


def stage_of(pod: Mapping[str, Any], min_ready_seconds: float, now: float) -> str:
    """The stage a pod's status shows at ``now``, judged with the shared predicates."""
    status = pod.get("status") or {}
    if p.is_failed(pod):
        return FAILED
    for cs in status.get("containerStatuses") or ():
        reason = ((cs.get("state") or {}).get("waiting") or {}).get("reason")
        if reason in ("ErrImagePull", "ImagePullBackOff"):
            return PULL_FAILING
        if reason == "CrashLoopBackOff":
            return CRASHING
    if p.is_running_and_ready(pod):
        return AVAILABLE if p.is_available(pod, min_ready_seconds, now) else READY
    if p.is_running(pod):
        return RUNNING
    return CREATING if status.get("containerStatuses") else PENDING
