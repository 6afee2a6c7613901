"""One pod's store container (etcd, ZooKeeper, NATS: ``stores/``) as a real process: start, probe, exit, stop.

A ``MemberProcess`` is the kubelet's memory of one pod incarnation (one uid). ``advance(now)`` moves it through
its modes and returns what the container looks like, in the simulated kubelet's vocabulary (``ContainerView``), so
the pod status is built by the same ``build_status`` the simulated kubelet uses.

Modes: ``creating`` (ContainerCreating for ``start_seconds``: image pull and init containers on a real node),
``running`` (a live pid), ``backoff`` (exited; restarted after the kubelet's back-off), ``failed`` (the ``fail``
fault: never started again), ``stopped`` (deletion: SIGTERM sent, SIGKILL at the end of the grace period).

Readiness is the store's check (etcd: etcd-druid's linearizable read, reference §1.7) with a short deadline, every
``probe_period_seconds`` after ``probe_initial_delay_seconds``; Ready after one success, unready after
``probe_failure_threshold`` consecutive failures, and at once when the process stops. The same background loop asks
the store for the member Lease's holder, as etcd-backup-restore's heartbeat does (reference §1.4; other stores have
no such agent and write none).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rollwise.kubelet.containers import CONTAINER_CREATING, KILLED_EXIT_CODE, ContainerView, Termination
from rollwise.kubelet.process.identity import MemberAddress
from rollwise.kubelet.process.stores import Store
from rollwise.kubelet.process.supervisor import Supervisor
from rollwise.kubelet.profiles import CRASH_LOOP_BACK_OFF, KubeletProfile

__all__ = ["MemberProcess", "ProbeSettings"]

@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeSettings:
    """Readiness and heartbeat timings. etcd-druid's are 15 s / 5 s / 5 (reference §1.7); a lab uses shorter ones."""

    initial_delay_seconds: float = 15.0
    period_seconds: float = 5.0
    timeout_seconds: float = 0.5
    failure_threshold: int = 5
    heartbeat_seconds: float = 10.0  # member Lease renewal: druid's default (reference §1.4)

    def __post_init__(self) -> None:
        if not (self.period_seconds > 0 and self.heartbeat_seconds > 0 and self.timeout_seconds > 0):
            raise ValueError("probe period, timeout and heartbeat must be > 0")
        if self.initial_delay_seconds < 0 or self.failure_threshold < 1:
            raise ValueError("initial delay must be >= 0 and the failure threshold >= 1")


@dataclass(slots=True)
class _Probe:
    """What the background loop found, read by ``advance`` under the member's lock."""

    ready: bool = False
    ready_since: float = 0.0
    failures: int = 0
    holder: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)


def _exit_termination(code: int, started: float | None, at: float) -> Termination:
    """A negative Popen code is a signal: the container runtime reports 128 + signal (SIGKILL → 137)."""
    exit_code = 128 - code if code < 0 else code
    reason = "Completed" if exit_code == 0 else "Error"
    return Termination(exit_code=exit_code, reason=reason, started_at=started, finished_at=at)


class MemberProcess:
    """One pod incarnation's container. Not thread-safe except for the prober it owns."""

    def __init__(self, *, name: str, image: str, command: Callable[[], list[str]], store: Store,
                 address: MemberAddress, log: Path,
                 supervisor: Supervisor, profile: KubeletProfile, probe: ProbeSettings,
                 clock: Callable[[], float], created_at: float, start_seconds: float) -> None:
        self.name, self.image, self.store, self.address = name, image, store, address
        self.endpoint = address.endpoint
        self._command, self._log, self._sup = command, log, supervisor
        self._profile, self._probe_settings, self._clock = profile, probe, clock
        self.mode = "creating"
        self._since = created_at
        self._start_at = created_at + start_seconds
        self.pid: int | None = None
        self.started_at: float | None = None
        self.restarts = 0
        self.last: Termination | None = None
        self.exited: Termination | None = None
        self._failing = False  # fail fault: the next exit is final
        self.crashing = False  # crash fault: every run of this incarnation is killed after crash_run_seconds
        self._crash_kill_at: float | None = None
        self._kill_at: float | None = None
        self._backoff_until = 0.0
        self._backoff_delay = 0.0
        self._backoff_step = 0
        self._lock = threading.Lock()
        self._probe = _Probe(ready_since=created_at)
        self._thread: threading.Thread | None = None

    # -- faults and deletion -------------------------------------------------------------------------------------

    def crash(self, now: float) -> None:
        """SIGKILL now; from now on each restart of this incarnation dies too (the simulator's ``crash``)."""
        self.crashing = True
        if self.mode == "running":
            self._signal(signal.SIGKILL)

    def kill(self, now: float) -> None:
        """SIGKILL now; the kubelet restarts it (the simulator's ``kill``: exits once)."""
        if self.mode == "running":
            self._signal(signal.SIGKILL)
            self._backoff_step = -1  # the next restart comes after kill_restart_seconds, not a back-off step

    def fail(self, now: float) -> None:
        """Stop it for good; the pod turns Failed (the simulator's ``fail``: the container refuses to run again)."""
        self._failing = True
        if self.mode == "running":
            self._signal(signal.SIGKILL)  # failed once the exit is seen, with the real exit code
        else:
            self.mode, self._since = "failed", now

    def recover(self, now: float) -> None:
        self.crashing = False
        self._crash_kill_at = None
        if self.mode == "backoff":
            self._backoff_until = now

    def terminate(self, now: float, grace: float) -> None:
        """Graceful deletion: SIGTERM now, SIGKILL at ``now + grace`` if it still runs (a repeat may shorten it)."""
        kill_at = now + max(0.0, grace)
        if self._kill_at is not None:
            self._kill_at = min(self._kill_at, kill_at)
            return
        self._kill_at = kill_at
        if self.mode == "running":
            self._signal(signal.SIGTERM)
        elif self.mode != "failed":
            self.mode = "stopped"

    # -- time ----------------------------------------------------------------------------------------------------

    def advance(self, now: float) -> ContainerView:
        """Apply what is due at ``now`` (exits, restarts, kills) and return how the container looks."""
        if self.mode == "running" and self.pid is not None:
            code = self._sup.exit_code(self.pid)
            if code is not None:
                self._exited(code, now)
            elif any(t is not None and now >= t for t in (self._kill_at, self._crash_kill_at)):
                self._signal(signal.SIGKILL)  # the grace period ran out, or a crash-looping run ends
        if self._kill_at is None:
            if self.mode == "creating" and now >= self._start_at:
                self._spawn(now)
            elif self.mode == "backoff" and now >= self._backoff_until:
                self.restarts += 1
                self._spawn(now)
        return self._view(now)

    @property
    def gone(self) -> bool:
        """A deleted pod whose container has stopped: the kubelet may now remove the object."""
        return self._kill_at is not None and self.mode != "running"

    def holder(self) -> str | None:
        with self._lock:
            return self._probe.holder if self.mode == "running" else None

    def close(self) -> None:
        """Stop the process now (SIGKILL) and the prober; used when the owner shuts down."""
        if self.mode == "running":
            self._signal(signal.SIGKILL)
        self._probe.stop.set()

    def stop_probing(self) -> None:
        self._probe.stop.set()

    # -- internals -----------------------------------------------------------------------------------------------

    def _spawn(self, now: float) -> None:
        proc = self._sup.start(self._command(), log=self._log)
        self.pid, self.mode, self.started_at, self._since = proc.pid, "running", now, now
        self.exited = None
        self._crash_kill_at = now + self._profile.crash_run_seconds if self.crashing else None
        self._probe.stop.set()
        self._probe = _Probe(ready_since=now)
        self._thread = threading.Thread(target=self._probe_loop, args=(self._probe, now), daemon=True,
                                        name=f"probe-{self.name}")
        self._thread.start()

    def _exited(self, code: int, now: float) -> None:
        self._probe.stop.set()
        term = _exit_termination(code, self.started_at, now)
        if self.pid is not None:
            self._sup.forget(self.pid)
        self.pid = None
        self.last = self.exited = term
        self._since = now
        if self._failing or self._kill_at is not None:
            self.mode = "failed" if self._failing else "stopped"
            return
        self.mode = "backoff"
        if self._backoff_step < 0:
            delay = self._profile.kill_restart_seconds
            self._backoff_step = 0
        else:
            # The kubelet's container restart back-off: 10 s doubling to 300 s (kubelet/profiles.py).
            delay = min(self._profile.crash_backoff_seconds * 2 ** self._backoff_step,
                        self._profile.crash_backoff_max_seconds)
            self._backoff_step += 1
        self._backoff_until, self._backoff_delay = now + delay, delay

    def _signal(self, signum: int) -> None:
        if self.pid is not None:
            self._sup.signal(self.pid, signum)
        if signum == signal.SIGKILL or self._kill_at is not None:
            with self._lock:
                self._probe.ready = False

    def _probe_loop(self, probe: _Probe, started: float) -> None:
        """Readiness ticks at ``started + initial delay + k * period``; the holder read for the Lease every
        ``heartbeat_seconds`` (backup-restore renews on its own period, reference §1.4)."""
        s = self._probe_settings
        next_probe, next_beat = started + s.initial_delay_seconds, started
        while not probe.stop.wait(max(0.0, min(next_probe, next_beat) - self._clock())):
            now = self._clock()
            if now >= next_beat or (probe.holder is None and now >= next_probe):
                # Until the first answer, retried at each probe tick: the first renewal follows the member's start.
                next_beat = max(next_beat, now) + s.heartbeat_seconds
                holder = self.store.holder(self.address, s.timeout_seconds)
                if holder is not None:
                    with self._lock:
                        probe.holder = holder
            if now < next_probe:
                continue
            next_probe += s.period_seconds * max(1, int((now - next_probe) // s.period_seconds) + 1)
            ok = self.store.ready(self.address, s.timeout_seconds)
            now = self._clock()
            with self._lock:
                if probe.stop.is_set():
                    return
                if ok:
                    probe.failures = 0
                    if not probe.ready:
                        probe.ready, probe.ready_since = True, now
                else:
                    probe.failures += 1
                    if probe.ready and probe.failures >= s.failure_threshold:
                        probe.ready, probe.ready_since = False, now

    def _view(self, now: float) -> ContainerView:
        ever = self.started_at is not None
        if self.mode == "running":
            with self._lock:
                ready, since = self._probe.ready, self._probe.ready_since
            return ContainerView(state={"running": {"startedAt": self.started_at}}, last=self.last if self.restarts
                                 else None, ready=ready, ready_since=since, running=True,
                                 run_started_at=self.started_at, restart_count=self.restarts, ever_started=True)
        if self.mode == "creating":
            return ContainerView(state={"waiting": {"reason": CONTAINER_CREATING}}, last=None, ready=False,
                                 ready_since=self._since, running=False, run_started_at=None,
                                 restart_count=0, ever_started=False)
        if self.mode == "backoff":
            # The kubelet's wording; the message names the whole back-off, so it does not change every tick.
            state = {"waiting": {"reason": CRASH_LOOP_BACK_OFF, "message": f"back-off {self._backoff_delay:g}s "
                                 f"restarting failed container={self.name}"}}
            return ContainerView(state=state, last=self.exited, ready=False, ready_since=self._since, running=False,
                                 run_started_at=self.started_at, restart_count=self.restarts, ever_started=ever,
                                 crash_looping=True)
        # stopped or failed: terminated (a container stopped before it ever ran shows the kill)
        term = self.exited or Termination(exit_code=KILLED_EXIT_CODE if self.mode == "stopped" else 1,
                                          reason="Error", started_at=None, finished_at=self._since)
        return ContainerView(state=term.as_state(), last=None, ready=False, ready_since=self._since, running=False,
                             run_started_at=self.started_at, restart_count=self.restarts, ever_started=ever,
                             exited=term)
