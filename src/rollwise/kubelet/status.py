"""The pod status the simulated kubelet writes, built from its containers' views (``containers.py``), and the
notes (events) a status change gives."""

from __future__ import annotations

import functools
import hashlib
import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.meta import Obj
from rollwise.api.records import dataclass
from rollwise.kubelet.containers import (
    ContainerRuntime,
    ContainerView,
)

__all__ = ["Note", "build_status", "container_waiting_reasons", "status_notes"]

# Fields of pod.status the kubelet owns; any other field someone else wrote is kept as it is.
_OWNED = ("phase", "conditions", "containerStatuses", "startTime", "podIP", "podIPs")
_OWNED_KEYS = frozenset(_OWNED)
_OWN_CONDITIONS = ("Initialized", "Ready", "ContainersReady", "PodScheduled")


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """One thing that happened, for the event stream: spec event ``type`` and, for ContainerWaiting, its reason."""

    type: str
    reason: str | None = None
    container: str | None = None


@functools.lru_cache(maxsize=1024)
def _image_id(image: str) -> str:
    """A stable digest per image name: there is no registry, so the name stands for the content."""
    return "sha256:" + hashlib.sha256(image.encode()).hexdigest()


def _container_status(c: ContainerRuntime, v: ContainerView) -> Obj:
    state = v.state
    if v.last is None and len(state) == 1:
        running = state.get("running")
        if running is not None and len(running) == 1 and _shareable(started := running.get("startedAt")):
            return _shared_container_status(c.name, c.image, v.ever_started, v.ready, v.running, v.restart_count,
                                            "running", "startedAt", started)
        waiting = state.get("waiting")
        if waiting is not None and len(waiting) == 1 and type(reason := waiting.get("reason")) is str:
            return _shared_container_status(c.name, c.image, v.ever_started, v.ready, v.running, v.restart_count,
                                            "waiting", "reason", reason)
    return _new_container_status(c.name, c.image, v.ever_started, v.ready, v.running, v.restart_count, state,
                                 v.last.as_state() if v.last is not None else {})


def _new_container_status(name: str, image: str, ever_started: bool, ready: bool, running: bool,
                          restart_count: int, state: Obj, last_state: Obj) -> Obj:
    return {
        "name": name,
        "image": image,
        # Required by the API (clients such as lightkube reject a status without it): empty until the image ran.
        "imageID": _image_id(image) if ever_started else "",
        "ready": ready,
        "started": running,
        "restartCount": restart_count,
        "state": state,
        "lastState": last_state,
    }


# Pods that start, become ready or stop at one instant write the very same conditions and container statuses: each
# is one object for all of them (stored objects are never changed in place, so equal parts can be one). A pod read
# again after a wave then finds them in the caches, where parts of its own had left them at 10,000 replicas
# (bench/scale.py); and a kubelet's "did the status change" compares them by identity. The caches are keyed by
# what the part is built from, ``typed`` so that a time written as 5 and one written as 5.0 (which print
# differently) stay apart; a key the cache no longer holds only costs the sharing.
def _shareable(t: object) -> bool:
    """A time a shared part may hold: a number or a string someone wrote, but not -0.0 (a key equal to 0.0 that
    prints apart); anything else is built afresh."""
    if type(t) is float:
        return t != 0 or math.copysign(1.0, t) > 0
    return type(t) is int or type(t) is str


@functools.lru_cache(maxsize=4096, typed=True)
def _shared_container_status(name: str, image: str, ever_started: bool, ready: bool, running: bool,
                             restart_count: int, state: str, field: str, value: object) -> Obj:
    return _new_container_status(name, image, ever_started, ready, running, restart_count, {state: {field: value}},
                                 {})


@functools.lru_cache(maxsize=4096, typed=True)
def _shared_condition(kind: str, status: str, at: object, reason: str, message: str) -> Obj:
    return _new_condition(kind, status, at, reason, message)


def _new_condition(kind: str, status: str, at: object, reason: str, message: str) -> Obj:
    cond: Obj = {"type": kind, "status": status, "lastTransitionTime": at}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _condition(kind: str, value: bool, at: float, old: Mapping[str, Mapping[str, Any]], reason: str = "",
               message: str = "") -> Obj:
    """A pod condition; ``lastTransitionTime`` is kept from the old one unless the status changed."""
    status = "True" if value else "False"
    prev = old.get(kind)
    if prev is not None and prev.get("status") == status and prev.get("lastTransitionTime") is not None:
        at = prev["lastTransitionTime"]
    if _shareable(at):
        return _shared_condition(kind, status, at, reason, message)
    return _new_condition(kind, status, at, reason, message)


def _pod_ip(pod: Mapping[str, Any]) -> str:
    """A stable per-pod address in 10.244.0.0/16, derived from the uid (no IPAM is simulated)."""
    meta = pod.get("metadata", {})
    return _address(str(meta.get("uid") or meta.get("name", "")))


@functools.lru_cache(maxsize=1 << 16)
def _address(seed: str) -> str:
    """Cached for the pods of a large run (a 10,000-replica rollout has 20,000 uids: at 16,384 entries the cache
    went round and missed on every call)."""
    n = zlib.crc32(seed.encode())
    return f"10.244.{(n >> 8) % 256}.{n % 254 + 1}"


def build_status(pod: Mapping[str, Any], containers: Sequence[tuple[ContainerRuntime, ContainerView]], *,
                 failed: bool, t: float, terminal: str | None = None) -> Obj:
    """The complete pod status at ``t`` from container views; unknown status fields and conditions are kept.
    ``terminal``: the phase of a deleted pod whose containers have all stopped (``termination.py``).

    Written as plain loops: the kubelet builds one on every pod transition, and the comprehensions and generators
    of the obvious version made it a fifteenth of a run of many small sets (bench/scale.py)."""
    # A status of the wrong shape (anyone may write one to a lenient store) is rebuilt from scratch, as the
    # kubelet's status manager overwrites what it does not own.
    old: Mapping[str, Any] = pod.get("status") or {}
    if not isinstance(old, dict):
        old = {}
    old_conditions: dict[str, Mapping[str, Any]] = {}
    foreign: list[Obj] = []
    listed = old.get("conditions")
    for c in listed if isinstance(listed, list) else ():
        if type(c) is dict or isinstance(c, Mapping):  # the exact type first: an ABC check costs ten times more
            kind = str(c.get("type"))
            old_conditions[kind] = c
    for kind, c in old_conditions.items():
        if kind not in _OWN_CONDITIONS:
            foreign.append(dict(c))
    meta = pod.get("metadata", {})
    created = meta.get("creationTimestamp")
    created = t if created is None else float(created)
    unready: list[str] = []
    ready_since_max: float | None = None
    unready_since_min: float | None = None
    all_started = True
    for c, v in containers:
        if not v.ready:
            unready.append(c.name)
            if unready_since_min is None or v.ready_since < unready_since_min:
                unready_since_min = v.ready_since
        if ready_since_max is None or v.ready_since > ready_since_max:
            ready_since_max = v.ready_since
        if not v.ever_started:
            all_started = False
    containers_ready = not unready
    if containers_ready:
        cr_at = created if ready_since_max is None else ready_since_max
    else:
        assert unready_since_min is not None
        cr_at = unready_since_min
    # Readiness gates (spec.readinessGates): Ready also needs each named condition True, as in Kubernetes.
    readiness_gates = pod.get("spec", {}).get("readinessGates")
    gates = [g.get("conditionType") for g in readiness_gates] if readiness_gates else []
    gates_false = [g for g in gates if (old_conditions.get(g) or {}).get("status") != "True"] if gates else []
    ready = containers_ready and not gates_false
    ready_at = cr_at
    if ready and gates:
        ready_at = max([cr_at, *(float(old_conditions[g].get("lastTransitionTime") or t) for g in gates)])
    elif containers_ready and gates_false:
        ready_at = t
    if terminal is not None:
        # status/generate.go: a terminal pod's containers are not ready because it completed or failed.
        cr_reason = ready_reason = "PodCompleted" if terminal == "Succeeded" else "PodFailed"
        cr_message = ready_message = ""
    elif not containers_ready:
        not_ready = f"containers with unready status: [{' '.join(unready)}]"
        ready_reason, ready_message = "ContainersNotReady", not_ready
        cr_reason, cr_message = "ContainersNotReady", not_ready
    else:
        cr_reason = cr_message = ""
        if gates_false:
            ready_reason = "ReadinessGatesNotReady"
            ready_message = f'corresponding condition of pod readiness gate "{gates_false[0]}" is not True'
        else:
            ready_reason = ready_message = ""
    conditions = [
        _condition("Initialized", True, created, old_conditions),
        _condition("Ready", ready, ready_at, old_conditions, ready_reason, ready_message),
        _condition("ContainersReady", containers_ready, cr_at, old_conditions, cr_reason, cr_message),
        _condition("PodScheduled", True, created, old_conditions),
    ]
    if foreign:
        conditions += foreign
    if failed:
        phase = "Failed"
    elif terminal is not None:
        phase = terminal
    elif all_started:
        phase = "Running"
    else:
        phase = "Pending"
    ip = _pod_ip(pod)
    status: Obj = {} if old.keys() <= _OWNED_KEYS else {k: v for k, v in old.items() if k not in _OWNED}
    status["phase"] = phase
    status["conditions"] = conditions
    status["containerStatuses"] = [_container_status(c, v) for c, v in containers]
    status["startTime"] = created
    status["podIP"] = ip
    status["podIPs"] = [{"ip": ip}]
    return status


def container_waiting_reasons(status: Mapping[str, Any] | None) -> list[str]:
    """The ``state.waiting.reason`` of each waiting container, in container order."""
    reasons = []
    for cs in _container_statuses(status):
        state = cs.get("state")
        waiting = state.get("waiting") if isinstance(state, dict) else None
        if isinstance(waiting, dict) and waiting.get("reason"):
            reasons.append(str(waiting["reason"]))
    return reasons


def _container_statuses(status: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The object entries of ``status.containerStatuses`` (none when the status or the list has another shape)."""
    listed = status.get("containerStatuses") if isinstance(status, dict) else None
    return [cs for cs in listed if isinstance(cs, dict)] if isinstance(listed, list) else []


def _ready(status: Mapping[str, Any]) -> bool:
    listed = status.get("conditions") if isinstance(status, dict) else None
    return isinstance(listed, list) and any(isinstance(c, dict) and c.get("type") == "Ready"
                                            and c.get("status") == "True" for c in listed)


def _waiting_by_name(status: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for cs in _container_statuses(status):
        state = cs.get("state")
        waiting = state.get("waiting") if isinstance(state, dict) else None
        if isinstance(waiting, dict) and waiting.get("reason"):
            out[str(cs.get("name"))] = str(waiting["reason"])
    return out


def status_notes(old: Mapping[str, Any] | None, new: Mapping[str, Any], *,
                 stopping: bool = False) -> tuple[Note, ...]:
    """What changed from ``old`` to ``new``, as spec event types: PodRunning, PodReady, PodNotReady, PodFailed,
    ContainerWaiting (one per container whose waiting reason is new). A pod the kubelet is ``stopping`` (deleted)
    is not 'not ready' or 'failed' for a probe or a crash: its Killing event says what happens."""
    old = old if isinstance(old, dict) else {}
    notes = []
    old_waiting = _waiting_by_name(old)
    for name, reason in _waiting_by_name(new).items():
        if old_waiting.get(name) != reason:
            notes.append(Note(type="ContainerWaiting", reason=reason, container=name))
    phase = new.get("phase")
    if phase != old.get("phase") and phase == "Running":
        notes.append(Note(type="PodRunning"))
    was_ready, is_ready = _ready(old), _ready(new)
    if is_ready and not was_ready:
        notes.append(Note(type="PodReady"))
    if was_ready and not is_ready and not stopping:
        notes.append(Note(type="PodNotReady"))
    if phase != old.get("phase") and phase == "Failed" and not stopping:
        notes.append(Note(type="PodFailed"))
    return tuple(notes)
