"""Pod health predicates: one rule, one name, one place (DESIGN principle 2).

Every strategy and the status computation call these, so "available" means the same thing everywhere — the
inconsistency behind upstream bugs #112307, #119234 and #123918 (reference §5.7, §8.10) cannot come back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rollwise.api.in_place import IN_PLACE_ANNOTATION, in_place_pending

__all__ = [
    "CONTAINER_ALIVE",
    "CONTAINER_DEAD",
    "CONTAINER_TRANSIENT",
    "DEAD_WAITING_REASONS",
    "available_at",
    "classify_container",
    "condition",
    "is_available",
    "is_created",
    "is_failed",
    "is_failing",
    "is_pending",
    "is_ready",
    "is_running",
    "is_running_and_ready",
    "is_succeeded",
    "is_terminating",
    "is_unavailable",
    "ready_since",
    "status_of",
    "unavailable_cause",
    "waiting_reasons",
]


_NO_STATUS: Mapping[str, Any] = {}


def _status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    """The pod's status, or an empty one when it is not an object: anyone who may write a pod's status may write
    any shape there (a scenario step, a client of a lenient server), and no predicate may fail on it (DESIGN
    principle 5). A status of the wrong shape reads as a pod the kubelet has not reported on."""
    status = pod.get("status")
    return status if isinstance(status, dict) else _NO_STATUS


status_of = _status


def waiting_reasons(pod: Mapping[str, Any]) -> dict[str, str]:
    """Container name → the reason it is waiting, for each container whose status says so."""
    out = {}
    for cs in _objects(_status(pod).get("containerStatuses")):
        state = cs.get("state")
        waiting = state.get("waiting") if isinstance(state, dict) else None
        if isinstance(waiting, dict) and waiting.get("reason"):
            out[str(cs.get("name", ""))] = str(waiting["reason"])
    return out


def _objects(value: Any) -> list[Mapping[str, Any]]:
    """The object entries of a status list (``conditions``, ``containerStatuses``); anything else has none."""
    if not isinstance(value, list):
        return []
    return [entry for entry in value if isinstance(entry, dict)]


def _seconds(value: Any) -> float | None:
    """A status timestamp as the controllers' view holds it (seconds), None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def condition(pod: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    """The pod condition of the given type, if present."""
    for found in _objects(_status(pod).get("conditions")):
        if found.get("type") == ctype:
            return found
    return None


def is_created(pod: Mapping[str, Any]) -> bool:
    """Created means the API server has seen it: a phase is set (reference §1.2 isCreated)."""
    return bool(_status(pod).get("phase"))


def is_pending(pod: Mapping[str, Any]) -> bool:
    return _status(pod).get("phase") == "Pending"


def is_running(pod: Mapping[str, Any]) -> bool:
    return _status(pod).get("phase") == "Running"


def is_failed(pod: Mapping[str, Any]) -> bool:
    return _status(pod).get("phase") == "Failed"


def is_succeeded(pod: Mapping[str, Any]) -> bool:
    return _status(pod).get("phase") == "Succeeded"


def is_terminating(pod: Mapping[str, Any]) -> bool:
    """A deletion has been requested (deletionTimestamp set); the object may linger for its grace period."""
    meta = pod.get("metadata")
    return meta is not None and meta.get("deletionTimestamp") is not None


def is_ready(pod: Mapping[str, Any]) -> bool:
    """The Ready condition is True (whatever the phase)."""
    c = condition(pod, "Ready")
    return c is not None and c.get("status") == "True"


def is_running_and_ready(pod: Mapping[str, Any]) -> bool:
    """Phase Running and Ready=True (reference §1.2 isRunningAndReady), and no in-place update under way: a pod
    whose images were just patched is restarting even while its Ready condition is still the old container's
    (api/in_place.py; OpenKruise keeps it out through its InPlaceUpdateReady readiness gate)."""
    # ``is_running(pod) and is_ready(pod)`` reading the status once: asked of every pod on every change.
    status = pod.get("status")
    if type(status) is not dict or status.get("phase") != "Running":
        return False
    conditions = status.get("conditions")
    if type(conditions) is not list:
        return False
    for found in conditions:
        if type(found) is dict and found.get("type") == "Ready":
            if found.get("status") != "True":
                return False
            # in_place_pending(pod), inlined: asked of every pod on every change.
            meta = pod.get("metadata")
            annotations = meta.get("annotations") if isinstance(meta, dict) else None
            return not annotations or IN_PLACE_ANNOTATION not in annotations
    return False


def ready_since(pod: Mapping[str, Any]) -> float | None:
    """When the Ready condition last became True, or None if the pod is not Ready."""
    c = condition(pod, "Ready")
    if c is None or c.get("status") != "True":
        return None
    return _seconds(c.get("lastTransitionTime"))


def is_available(pod: Mapping[str, Any], min_ready_seconds: float, now: float) -> bool:
    """Running, Ready, and Ready for strictly longer than minReadySeconds (reference §1.2, podutil.IsPodAvailable)."""
    if not is_running_and_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = ready_since(pod)
    return since is not None and since + min_ready_seconds < now


def available_at(pod: Mapping[str, Any], min_ready_seconds: float) -> float | None:
    """The earliest instant after which a Ready pod counts as available: the exact requeue time."""
    if not is_running_and_ready(pod):
        return None
    since = ready_since(pod)
    if since is None or min_ready_seconds <= 0:
        return None
    return since + min_ready_seconds


def is_unavailable(pod: Mapping[str, Any] | None, min_ready_seconds: float, now: float) -> bool:
    """Missing, terminating, or not available: what spends maxUnavailable budget (reference §5.3 isUnavailable)."""
    return pod is None or is_terminating(pod) or not is_available(pod, min_ready_seconds, now)


# DEP-07 (seed 001) health assessment: how a member's container stands.
CONTAINER_DEAD = "Dead"
CONTAINER_TRANSIENT = "Transient"
CONTAINER_ALIVE = "Alive"

DEAD_WAITING_REASONS = frozenset(
    {"CrashLoopBackOff", "RunContainerError", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError"}
)


def classify_container(pod: Mapping[str, Any], container: str | None = None) -> str | None:
    """Dead, Transient or Alive for the named container (default: the first), or None when it has no status yet.

    seed 001 (DEP-07): terminated, or waiting for a reason that will not resolve by itself, is Dead; waiting while
    being created is Transient; running is Alive.
    """
    statuses = _objects(_status(pod).get("containerStatuses"))
    if container is not None:
        statuses = [s for s in statuses if s.get("name") == container]
    if not statuses:
        return None
    state = statuses[0].get("state")
    if not state or not isinstance(state, dict):
        return None  # DEP-07 (etcd-druid health.go): no sub-state at all is Unknown, not Transient
    if "running" in state:
        return CONTAINER_ALIVE
    if "terminated" in state:
        return CONTAINER_DEAD
    waiting = state.get("waiting")
    reason = waiting.get("reason", "") if isinstance(waiting, dict) else ""
    if reason in DEAD_WAITING_REASONS:
        return CONTAINER_DEAD
    return CONTAINER_TRANSIENT


def is_failing(pod: Mapping[str, Any]) -> bool:
    """Phase Failed, or some container is Dead in DEP-07's sense (terminated, crash-looping, image or config
    errors), or it is not Ready and running again after an error exit — the short run between two crashes of a
    crash loop, which must not read as recovery."""
    if is_failed(pod):
        return True
    for cs in _objects(_status(pod).get("containerStatuses")):
        if classify_container(pod, cs.get("name")) == CONTAINER_DEAD:
            return True
        last_state = cs.get("lastState")
        last = last_state.get("terminated") if isinstance(last_state, dict) else None
        if not cs.get("ready") and isinstance(last, dict) and last.get("exitCode") not in (None, 0):
            return True
    return False


def unavailable_cause(pod: Mapping[str, Any] | None, min_ready_seconds: float, now: float) -> str:
    """Plain words for why a pod is not available, naming the container and its state where one explains it."""
    if pod is None:
        return "missing"
    if is_terminating(pod):
        return "terminating"
    if in_place_pending(pod):
        return "containers restarting for an in-place update"
    status = _status(pod)
    phase = status.get("phase") or "not yet created"
    for cs in _objects(status.get("containerStatuses")):
        state = cs.get("state")
        if not isinstance(state, dict):
            continue
        if "waiting" in state:
            reason = _text(state["waiting"], "waiting")
            return f"container {cs.get('name')} is {reason}"
        if "terminated" in state:
            reason = _text(state["terminated"], "terminated")
            return f"container {cs.get('name')} terminated ({reason})"
    if phase != "Running":
        return f"phase {phase}"
    if not is_ready(pod):
        return "not Ready"
    since = ready_since(pod)
    if since is not None and min_ready_seconds > 0:
        # Stable wording (no elapsed seconds), so a status condition quoting it does not change every instant.
        return f"Ready since t={since:g}, not yet for minReadySeconds {min_ready_seconds:g}"
    return "not available"


def _text(detail: Any, default: str) -> str:
    """A container state's reason, or ``default`` when there is none (or the state is not an object)."""
    reason = detail.get("reason") if isinstance(detail, dict) else None
    return str(reason) if reason else default
