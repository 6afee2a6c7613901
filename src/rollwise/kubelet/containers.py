"""A container's timeline as a pure function of virtual time: the simulated kubelet's container runtime.

Each container's private memory is a ``ContainerRuntime``: a *mode* that began at ``since`` plus the few facts
faults change. Everything visible (state, readiness, restart count, the next transition) is a closed-form function of
that record, the image's behaviour, the profile and ``t``: ``observe`` never iterates over elapsed time beyond the
handful of uncapped back-off steps, so a late call catches up in one step, and two calls at one ``t`` agree.

Modes: ``create`` (ContainerCreating, then the image's behaviour), ``run`` (running since ``started_at``, readiness
clock from ``since``), ``restart`` (killed at ``since``, running again ``kill_restart_seconds`` later), ``crash``
(exited at ``since``, then the CrashLoopBackOff cycle) and ``failed`` (terminated for good).
"""

from __future__ import annotations

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

__all__ = ["CONTAINER_CREATING", "KILLED_EXIT_CODE", "ContainerRuntime", "ContainerView", "Termination",
           "observe", "waiting_state"]

KILLED_EXIT_CODE = 137  # 128 + SIGKILL: what a killed container reports
CRASH_EXIT_CODE = 1
CONTAINER_CREATING = "ContainerCreating"
_PULL_FAILURES = (ERR_IMAGE_PULL, IMAGE_PULL_BACK_OFF)
@dataclass(frozen=True, slots=True, kw_only=True)
class Termination:
    """One container exit, rendered as ``state.terminated`` / ``lastState.terminated``."""

    exit_code: int
    reason: str
    started_at: float | None
    finished_at: float
    message: str = ""

    def as_state(self) -> Obj:
        body: Obj = {"exitCode": self.exit_code, "reason": self.reason}
        if self.message:
            body["message"] = self.message
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


def waiting_state(reason: str, message: str = "") -> Obj:
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
        return ContainerView(state=waiting_state(CRASH_LOOP_BACK_OFF, message), last=exited, running=False,
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
        return ContainerView(state=waiting_state(CONTAINER_CREATING), next_at=start_at, **waiting)
    if b.fail in _PULL_FAILURES:
        # Each pull attempt fails (ErrImagePull), then the kubelet backs off (ImagePullBackOff), 10 s doubling.
        cycle = _Cycle(start_at, fixed=p.pull_error_seconds, initial=p.pull_backoff_seconds,
                       maximum=p.pull_backoff_max_seconds)
        k = cycle.index_at(t)
        error_until = cycle.start(k) + p.pull_error_seconds
        if t < error_until:
            state = waiting_state(ERR_IMAGE_PULL, f'failed to pull image "{c.image}": not found (simulated)')
            return ContainerView(state=state, next_at=error_until, **waiting)
        state = waiting_state(IMAGE_PULL_BACK_OFF, f'Back-off pulling image "{c.image}"')
        return ContainerView(state=state, next_at=cycle.start(k + 1), **waiting)
    if b.fail == CREATE_CONTAINER_CONFIG_ERROR:
        # The kubelet retries on every sync, but nothing visible changes, so there is nothing to wake for.
        message = f'container configuration for image "{c.image}" cannot be created (simulated)'
        return ContainerView(state=waiting_state(CREATE_CONTAINER_CONFIG_ERROR, message), **waiting)
    return _running(c, b, p, t, started=start_at, clock=start_at, restarts=c.restarts, last=c.last,
                    not_ready_since=c.since)
