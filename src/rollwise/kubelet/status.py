"""A container's timeline and the pod status built from it, as pure functions of virtual time.

Each container's private memory is a ``ContainerRuntime``: a *mode* that began at ``since`` plus the few facts
faults change. Everything visible (state, readiness, restart count, the next transition) is a closed-form function of
that record, the image's behaviour, the profile and ``t``: ``observe`` never iterates over elapsed time beyond the
handful of uncapped back-off steps, so a late call catches up in one step, and two calls at one ``t`` agree.

Modes: ``create`` (ContainerCreating, then the image's behaviour), ``run`` (running since ``started_at``, readiness
clock from ``since``), ``restart`` (killed at ``since``, running again ``kill_restart_seconds`` later), ``crash``
(exited at ``since``, then the CrashLoopBackOff cycle) and ``failed`` (terminated for good).
"""

from __future__ import annotations

import functools
import hashlib
import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.meta import Obj
from rollwise.api.records import dataclass
from rollwise.kubelet.profiles import (
    CRASH_LOOP_BACK_OFF,
    CREATE_CONTAINER_CONFIG_ERROR,
    ERR_IMAGE_PULL,
    IMAGE_PULL_BACK_OFF,
    ImageBehaviour,
    KubeletProfile,
)

__all__ = [
    "KILLED_EXIT_CODE",
    "MODES",
    "ContainerRuntime",
    "ContainerView",
    "Note",
    "Termination",
    "build_status",
    "container_waiting_reasons",
    "observe",
    "status_notes",
]

MODES = ("create", "run", "restart", "crash", "failed")
KILLED_EXIT_CODE = 137  # 128 + SIGKILL: what a killed container reports
CRASH_EXIT_CODE = 1
CONTAINER_CREATING = "ContainerCreating"
_PULL_FAILURES = (ERR_IMAGE_PULL, IMAGE_PULL_BACK_OFF)
# Fields of pod.status the kubelet owns; any other field someone else wrote is kept as it is.
_OWNED = ("phase", "conditions", "containerStatuses", "startTime", "podIP", "podIPs")
_OWNED_KEYS = frozenset(_OWNED)
_OWN_CONDITIONS = ("Initialized", "Ready", "ContainersReady", "PodScheduled")


@dataclass(frozen=True, slots=True, kw_only=True)
class Termination:
    """One container exit, rendered as ``state.terminated`` / ``lastState.terminated``."""

    exit_code: int
    reason: str
    started_at: float | None
    finished_at: float

    def as_state(self) -> Obj:
        body: Obj = {"exitCode": self.exit_code, "reason": self.reason}
        if self.started_at is not None:
            body["startedAt"] = self.started_at
        body["finishedAt"] = self.finished_at
        return {"terminated": body}


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerRuntime:
    """The kubelet's private memory of one container: a mode since a time, and what faults set."""

    name: str
    image: str
    mode: str = "create"
    since: float = 0.0
    started_at: float | None = None  # run: its startedAt; restart/crash/failed: start of the run that ended
    restarts: int = 0  # restartCount when the mode began
    last: Termination | None = None  # lastState when the mode began
    ran: bool = False  # the container had started at least once before the mode began
    crashing: bool = False  # crash fault: every run exits after crash_run_seconds
    unready_at: float | None = None  # unready fault: readiness failing since then


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerView:
    """What a container looks like at one instant, and when that next changes (``next_at``, None if never)."""

    state: Obj
    last: Termination | None
    ready: bool
    ready_since: float  # start of the current stretch of this readiness value
    running: bool
    run_started_at: float | None  # start of the current (or the last) run
    restart_count: int
    ever_started: bool
    crash_looping: bool = False  # exited, in the CrashLoopBackOff cycle
    exited: Termination | None = None  # the exit shown in ``state``, if terminated
    next_at: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Note:
    """One thing that happened, for the event stream: spec event ``type`` and, for ContainerWaiting, its reason."""

    type: str
    reason: str | None = None
    container: str | None = None


class _Cycle:
    """Start times of back-off cycles: cycle k lasts ``fixed + min(initial·2^k, maximum)`` seconds.

    Every boundary is computed by one expression (list entry, or capped base + n·period), so a wake time handed out
    earlier is reproduced bit for bit when the loop calls back at it.
    """

    def __init__(self, origin: float, *, fixed: float, initial: float, maximum: float) -> None:
        self.initial, self.maximum = initial, maximum
        self.period = fixed + maximum
        self.starts = [origin]
        while self.backoff(len(self.starts) - 1) < maximum:
            k = len(self.starts) - 1
            self.starts.append(self.starts[k] + fixed + self.backoff(k))

    def backoff(self, k: int) -> float:
        return min(self.initial * 2.0 ** min(k, 64), self.maximum)

    def start(self, k: int) -> float:
        capped = len(self.starts) - 1
        return self.starts[k] if k <= capped else self.starts[capped] + (k - capped) * self.period

    def index_at(self, t: float) -> int:
        """The cycle running at ``t`` (``t`` at or after the origin)."""
        capped = len(self.starts) - 1
        for k in range(capped):
            if t < self.starts[k + 1]:
                return k
        k = capped + max(0, int((t - self.starts[capped]) // self.period))
        while self.start(k + 1) <= t:
            k += 1
        while k > capped and self.start(k) > t:
            k -= 1
        return k


def _go_duration(seconds: float) -> str:
    """``10s``, ``1m20s``, ``5m0s``: how the kubelet prints a back-off."""
    minutes, rest = divmod(seconds, 60.0)
    return f"{rest:g}s" if minutes == 0 else f"{int(minutes)}m{rest:g}s"


def _waiting(reason: str, message: str = "") -> Obj:
    body: Obj = {"reason": reason}
    if message:
        body["message"] = message
    return {"waiting": body}


def _crash_cycle(c: ContainerRuntime, p: KubeletProfile, t: float, *, first_exit: float, run_started: float | None,
                 restarts: int, last: Termination | None, not_ready_since: float) -> ContainerView:
    """Exit, show terminated, wait in CrashLoopBackOff (10 s doubling to 300 s from the exit), run, exit again."""
    cycle = _Cycle(first_exit, fixed=p.crash_run_seconds, initial=p.crash_backoff_seconds,
                   maximum=p.crash_backoff_max_seconds)
    k = cycle.index_at(t)

    def run_start(i: int) -> float | None:
        return run_started if i == 0 else cycle.start(i - 1) + cycle.backoff(i - 1)

    def exit_(i: int) -> Termination:
        return Termination(exit_code=CRASH_EXIT_CODE, reason="Error", started_at=run_start(i),
                           finished_at=cycle.start(i))

    exited, back = exit_(k), cycle.backoff(k)
    restart_at = cycle.start(k) + back
    common: dict[str, Any] = {"ready": False, "ready_since": not_ready_since, "ever_started": True}
    shown_until = cycle.start(k) + min(p.crash_exited_seconds, back)
    if t < shown_until:
        return ContainerView(state=exited.as_state(), last=exit_(k - 1) if k else last, running=False,
                             run_started_at=run_start(k), restart_count=restarts + k, crash_looping=True,
                             exited=exited, next_at=shown_until, **common)
    if t < restart_at:
        message = f"back-off {_go_duration(back)} restarting failed container={c.name}"
        return ContainerView(state=_waiting(CRASH_LOOP_BACK_OFF, message), last=exited, running=False,
                             run_started_at=run_start(k), restart_count=restarts + k, crash_looping=True,
                             next_at=restart_at, **common)
    return ContainerView(state={"running": {"startedAt": restart_at}}, last=exited, running=True,
                         run_started_at=restart_at, restart_count=restarts + k + 1, next_at=cycle.start(k + 1),
                         **common)


def _running(c: ContainerRuntime, b: ImageBehaviour, p: KubeletProfile, t: float, *, started: float, clock: float,
             restarts: int, last: Termination | None, not_ready_since: float) -> ContainerView:
    """A running container: readiness passes ``ready_delay`` after ``clock`` unless a fault or the image says no."""
    if c.crashing or b.fail == CRASH_LOOP_BACK_OFF:
        exit_at = max(started + p.crash_run_seconds, clock)
        if t >= exit_at:
            return _crash_cycle(c, p, t, first_exit=exit_at, run_started=started, restarts=restarts, last=last,
                                not_ready_since=not_ready_since)
        return ContainerView(state={"running": {"startedAt": started}}, last=last, ready=False,
                             ready_since=not_ready_since, running=True, run_started_at=started,
                             restart_count=restarts, ever_started=True, next_at=exit_at)
    ready_at = clock + p.ready_delay(c.image)
    ready = b.ready and c.unready_at is None
    if ready and t >= ready_at:
        since, next_at = ready_at, None
    elif ready:
        since, next_at = not_ready_since, ready_at
    else:
        # An unready fault on a container that had passed readiness starts the not-ready stretch at the fault.
        was_ready = b.ready and c.unready_at is not None and c.unready_at >= ready_at
        since, next_at = (c.unready_at if was_ready and c.unready_at is not None else not_ready_since), None
    return ContainerView(state={"running": {"startedAt": started}}, last=last, ready=ready and t >= ready_at,
                         ready_since=since, running=True, run_started_at=started, restart_count=restarts,
                         ever_started=True, next_at=next_at)


def observe(c: ContainerRuntime, b: ImageBehaviour, p: KubeletProfile, t: float) -> ContainerView:
    """The container at time ``t`` (at or after ``c.since``): every transition due at or before ``t`` applied."""
    if c.mode == "failed":
        exited = Termination(exit_code=CRASH_EXIT_CODE, reason="Error", started_at=c.started_at, finished_at=c.since)
        return ContainerView(state=exited.as_state(), last=c.last, ready=False, ready_since=c.since, running=False,
                             run_started_at=c.started_at, restart_count=c.restarts, ever_started=c.ran,
                             exited=exited)
    if c.mode == "crash":
        return _crash_cycle(c, p, t, first_exit=c.since, run_started=c.started_at, restarts=c.restarts, last=c.last,
                            not_ready_since=c.since)
    if c.mode == "restart":
        killed = Termination(exit_code=KILLED_EXIT_CODE, reason="Error", started_at=c.started_at, finished_at=c.since)
        back_at = c.since + p.kill_restart_seconds
        if t < back_at:
            return ContainerView(state=killed.as_state(), last=c.last, ready=False, ready_since=c.since,
                                 running=False, run_started_at=c.started_at, restart_count=c.restarts,
                                 ever_started=True, exited=killed, next_at=back_at)
        return _running(c, b, p, t, started=back_at, clock=back_at, restarts=c.restarts + 1, last=killed,
                        not_ready_since=c.since)
    if c.mode == "run":
        started = c.since if c.started_at is None else c.started_at
        return _running(c, b, p, t, started=started, clock=c.since, restarts=c.restarts, last=c.last,
                        not_ready_since=c.since)
    # create: the sandbox and the image pull take start_delay, then the image's behaviour shows.
    start_at = c.since + p.start_delay(c.image)
    waiting: dict[str, Any] = {"last": c.last, "ready": False, "ready_since": c.since, "running": False,
                               "run_started_at": None, "restart_count": c.restarts, "ever_started": c.ran}
    if t < start_at:
        return ContainerView(state=_waiting(CONTAINER_CREATING), next_at=start_at, **waiting)
    if b.fail in _PULL_FAILURES:
        # Each pull attempt fails (ErrImagePull), then the kubelet backs off (ImagePullBackOff), 10 s doubling.
        cycle = _Cycle(start_at, fixed=p.pull_error_seconds, initial=p.pull_backoff_seconds,
                       maximum=p.pull_backoff_max_seconds)
        k = cycle.index_at(t)
        error_until = cycle.start(k) + p.pull_error_seconds
        if t < error_until:
            state = _waiting(ERR_IMAGE_PULL, f'failed to pull image "{c.image}": not found (simulated)')
            return ContainerView(state=state, next_at=error_until, **waiting)
        state = _waiting(IMAGE_PULL_BACK_OFF, f'Back-off pulling image "{c.image}"')
        return ContainerView(state=state, next_at=cycle.start(k + 1), **waiting)
    if b.fail == CREATE_CONTAINER_CONFIG_ERROR:
        # The kubelet retries on every sync, but nothing visible changes, so there is nothing to wake for.
        message = f'container configuration for image "{c.image}" cannot be created (simulated)'
        return ContainerView(state=_waiting(CREATE_CONTAINER_CONFIG_ERROR, message), **waiting)
    return _running(c, b, p, t, started=start_at, clock=start_at, restarts=c.restarts, last=c.last,
                    not_ready_since=c.since)


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
                 failed: bool, t: float) -> Obj:
    """The complete pod status at ``t`` from container views; unknown status fields and conditions are kept.

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
    if not containers_ready:
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


def status_notes(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> tuple[Note, ...]:
    """What changed from ``old`` to ``new``, as spec event types: PodRunning, PodReady, PodNotReady, PodFailed,
    ContainerWaiting (one per container whose waiting reason is new)."""
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
    if was_ready and not is_ready:
        notes.append(Note(type="PodNotReady"))
    if phase != old.get("phase") and phase == "Failed":
        notes.append(Note(type="PodFailed"))
    return tuple(notes)
