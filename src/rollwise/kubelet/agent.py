"""The simulated kubelet: pure pod lifecycle and faults. The simulation loop owns the clock and the store.

What it models, per pod object (one ``PodRuntime`` per pod uid):

- creation → Pending with containers waiting ``ContainerCreating`` → Running after ``startSeconds`` (the pod is
  Running once every container has started) → Ready after ``readySeconds`` (the pod is Ready once every container is
  ready and every ``spec.readinessGates`` condition is True). Conditions Initialized, Ready, ContainersReady and
  PodScheduled keep their ``lastTransitionTime`` until their status changes; after a late call it is the time the
  transition happened, not the time of the call.
- per-image behaviours: ErrImagePull / ImagePullBackOff (pull back-off 10 s doubling to 300 s, alternating
  reasons, never runs), CreateContainerConfigError (never runs), CrashLoopBackOff (runs briefly, exits with code 1,
  restart back-off 10 s doubling to 300 s, never Ready), ``ready: false`` and per-image timings.
- faults, applied through ``apply_fault`` (then ``advance``): ``crash``, ``unready``, ``recover``, ``fail``,
  ``kill``. Faults belong to one pod object; a recreated pod (new uid) starts healthy. ``recover`` clears faults,
  not image behaviours: a crashing image keeps crashing until the pod runs another image.
- graceful deletion (``termination.py``): the containers stop as the kubelet stops them (preStop, SIGTERM, the
  image's ``stopSeconds``, SIGKILL at the end of the grace period), each then ``terminated`` and not ready; once
  all have stopped the pod is Succeeded or Failed. It is removed at the later of that and ``deletionTimestamp +
  min(terminationSeconds, grace)``. Faults requested after the deletion are ignored.
- a changed ``spec.containers[*].image`` restarts that container with the new image (the kubelet recreates a
  container whose spec changed).

What it does not model: a scheduler or nodes (pods are scheduled at creation, ``podIP`` is derived from the uid,
there is no ``nodeName``/``hostIP``), probes beyond timings (readiness passes after a delay, failures are faults),
init containers, ephemeral containers, ``restartPolicy`` other than Always (so never Succeeded), resources, volumes
and images beyond the exact image string, and the kubelet's immediate first restart after a crash (the scenario
contract asks for 10, 20, 40 ... s from the first exit).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from rollwise.api.meta import Obj, deletion_timestamp, uid_of
from rollwise.api.records import dataclass
from rollwise.kubelet.containers import KILLED_EXIT_CODE, ContainerRuntime, ContainerView, Termination, observe
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.kubelet.status import Note, build_status, container_waiting_reasons, status_notes
from rollwise.kubelet.termination import DEFAULT_GRACE_SECONDS, grace_seconds, schedule, stopped_view, terminal_phase

__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "FAULTS",
    "KubeletStep",
    "Note",
    "PendingFault",
    "PodRuntime",
    "advance",
    "apply_fault",
    "container_waiting_reasons",
    "removal_time",
]

FAULTS = ("crash", "unready", "recover", "fail", "kill")


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingFault:
    """A fault requested at ``at``; ``advance`` applies it to the container(s) as they were at that instant."""

    fault: str
    at: float
    container: str | None = None  # None: every container of the pod


@dataclass(frozen=True, slots=True, kw_only=True)
class PodRuntime:
    """The kubelet's private memory of one pod object: its containers' timelines and the faults it was given."""

    uid: str = ""
    containers: tuple[ContainerRuntime, ...] = ()
    failed_at: float | None = None
    faults: tuple[PendingFault, ...] = ()
    stops: tuple[Termination, ...] | None = None
    """Once the pod is deleted: when and how each container stops (``termination.schedule``)."""

    @classmethod
    def initial(cls) -> PodRuntime:
        """A runtime for a pod the kubelet has not seen yet."""
        return cls()


@dataclass(frozen=True, slots=True, kw_only=True)
class KubeletStep:
    """What the kubelet would do now: write ``status`` (None: unchanged), keep ``runtime``, look again at
    ``wake_at`` (None: only when the pod changes), or have the pod deleted with grace 0 (``remove``)."""

    status: Obj | None
    runtime: PodRuntime
    wake_at: float | None
    remove: bool = False
    old_status: Obj | None = None
    """The status ``status`` replaces (what ``notes`` compares it with)."""
    terminating: bool = False

    @property
    def notes(self) -> tuple[Note, ...]:
        """What the write changes, as kubelet events (only a driver that emits them asks)."""
        return () if self.status is None else status_notes(self.old_status, self.status, stopping=self.terminating)


def _for_pod(pod: Mapping[str, Any], runtime: PodRuntime) -> PodRuntime:
    """The runtime for this pod object; a different uid (a pod recreated under the same name) starts afresh."""
    uid = uid_of(pod)
    if runtime.uid and uid and runtime.uid != uid:
        return PodRuntime(uid=uid)
    if runtime.uid or not uid:
        return runtime
    # Built field by field rather than by ``replace``, which re-reads the class' fields on every call: this and
    # ``_sync_images`` run once for every pod a run creates.
    return PodRuntime(uid=uid, containers=runtime.containers, failed_at=runtime.failed_at, faults=runtime.faults,
                      stops=runtime.stops)


def apply_fault(pod: Mapping[str, Any], runtime: PodRuntime, fault: str, now: float, *,
                container: str | None = None) -> PodRuntime:
    """Record ``fault`` at ``now`` for this pod object; the next ``advance`` applies it. Unknown → ValueError."""
    if fault not in FAULTS:
        raise ValueError(f"unknown pod fault {fault!r}; supported: {', '.join(FAULTS)}")
    rt = _for_pod(pod, runtime)
    return replace(rt, faults=(*rt.faults, PendingFault(fault=fault, at=now, container=container)))


def removal_time(pod: Mapping[str, Any], profile: KubeletProfile,
                 stops: tuple[Termination, ...] = ()) -> float | None:
    """When a terminating pod is gone: once its containers have stopped (``stops``), and not before
    deletionTimestamp + min(terminationSeconds, grace); None if not deleting."""
    deleted = deletion_timestamp(pod)
    if deleted is None:
        return None
    return max([deleted + min(profile.termination_seconds, grace_seconds(pod)), *(s.finished_at for s in stops)])


def _spec_images(pod: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(c.get("name", "")), str(c.get("image", ""))) for c in pod.get("spec", {}).get("containers") or ()]


def _view(c: ContainerRuntime, profile: KubeletProfile, t: float) -> ContainerView:
    return observe(c, profile.behaviour(c.image), profile, t)


def _fault_container(fault: str, c: ContainerRuntime, v: ContainerView, t: float) -> ContainerRuntime:
    """One container after ``fault`` at ``t``, given how it looked at ``t``."""
    if fault == "crash":
        # A running container exits now and from then on every run exits; one not running crashes once it runs.
        if v.running:
            return replace(c, mode="crash", since=t, started_at=v.run_started_at, restarts=v.restart_count,
                           last=v.last, ran=True, crashing=True)
        return replace(c, crashing=True)
    if fault == "unready":
        return c if c.unready_at is not None else replace(c, unready_at=t)
    if fault == "recover":
        if not (c.crashing or c.unready_at is not None or c.mode == "crash"):
            return c  # a healthy container (even one still starting) is left alone
        healthy = replace(c, crashing=False, unready_at=None)
        if v.running and v.ready:
            return healthy
        if v.running:  # keeps running; readiness passes ready_seconds from now
            return replace(healthy, mode="run", since=t, started_at=v.run_started_at, restarts=v.restart_count,
                           last=v.last, ran=True)
        if v.crash_looping:  # restart now, without waiting out the back-off
            return replace(healthy, mode="run", since=t, started_at=t, restarts=v.restart_count + 1,
                           last=v.exited or v.last, ran=True)
        return healthy  # still creating, or a bad image: nothing runs to recover
    if fault == "kill":
        if not v.running:
            return c  # nothing to kill
        return replace(c, mode="restart", since=t, started_at=v.run_started_at, restarts=v.restart_count,
                       last=v.last, ran=True)
    # fail: every container terminated with exit code 1; the pod is Failed for good.
    return replace(c, mode="failed", since=t, started_at=v.run_started_at, restarts=v.restart_count, last=v.last,
                   ran=v.ever_started)


def _apply(rt: PodRuntime, f: PendingFault, profile: KubeletProfile) -> PodRuntime:
    if rt.failed_at is not None:
        return rt  # a Failed pod stays Failed
    containers = tuple(
        c if f.container not in (None, c.name) and f.fault != "fail"
        else _fault_container(f.fault, c, _view(c, profile, f.at), f.at)
        for c in rt.containers
    )
    return replace(rt, containers=containers, failed_at=f.at if f.fault == "fail" else None)


def _sync_images(rt: PodRuntime, spec: list[tuple[str, str]], profile: KubeletProfile, t: float) -> PodRuntime:
    """Restart containers whose image changed at ``t``; add new containers, drop ones no longer in the spec."""
    by_name = {c.name: c for c in rt.containers}
    out = []
    for name, image in spec:
        c = by_name.get(name)
        if c is None:
            out.append(_new_container(name, image, t))
        elif c.image != image and rt.failed_at is None:
            v = _view(c, profile, t)
            killed = Termination(exit_code=KILLED_EXIT_CODE, reason="Error", started_at=v.run_started_at,
                                 finished_at=t)
            out.append(replace(c, image=image, mode="create", since=t, started_at=None,
                               restarts=v.restart_count + (1 if v.running else 0),
                               last=killed if v.running else v.last, ran=v.ever_started))
        else:
            out.append(c)
    containers = tuple(out)
    if containers == rt.containers:
        return rt
    return PodRuntime(uid=rt.uid, containers=containers, failed_at=rt.failed_at, faults=rt.faults, stops=rt.stops)


@functools.lru_cache(maxsize=1024)
def _new_container(name: str, image: str, since: float) -> ContainerRuntime:
    """A container just created: one object for all the pods that created it at one instant (it is frozen). The
    pods of a wave then read one runtime at every tick, in the caches, rather than one each that had left them at
    10,000 replicas (bench/scale.py)."""
    return ContainerRuntime(name=name, image=image, since=since)


def _with_readiness(c: ContainerRuntime, v: ContainerView, profile: KubeletProfile,
                    readiness: Mapping[str, tuple[bool, float]]) -> ContainerView:
    """A running container whose readiness an application model decides (the quorum model's probe): its own
    ``readySeconds`` timer is replaced, while the image's ``ready: false`` and an ``unready`` fault still say no."""
    if c.name not in readiness or not v.running or v.crash_looping:
        return v
    ready, since = readiness[c.name]
    allowed = profile.behaviour(c.image).ready and c.unready_at is None
    value = ready and allowed
    if value == v.ready and not value:
        return replace(v, next_at=None)
    # Ready from the probe tick that passed, never from the profile's own readySeconds timer (which the model
    # replaces): the Ready condition's lastTransitionTime is what minReadySeconds counts from (reference §5.7).
    return replace(v, ready=value, ready_since=max(since, v.run_started_at or since), next_at=None)


def advance(pod: Obj, runtime: PodRuntime, profile: KubeletProfile, now: float, *,
            readiness: Mapping[str, tuple[bool, float]] | None = None) -> KubeletStep:
    """Apply every transition due at or before ``now``; the same ``now`` twice changes nothing the second time.

    ``readiness`` (container -> (ready, since)) lets an application model decide when running containers pass
    their readiness probe, instead of the profile's ``readySeconds``.
    """
    rt = _for_pod(pod, runtime)
    spec = _spec_images(pod)
    deleted = deletion_timestamp(pod)
    # A terminating pod's status stays as it was when deletion was requested.
    t = now if deleted is None else min(now, deleted)
    if not rt.containers:
        created = pod.get("metadata", {}).get("creationTimestamp")
        rt = _sync_images(rt, spec, profile, t if created is None else min(float(created), t))
    later: tuple[PendingFault, ...] = ()
    if rt.faults:
        pending = sorted(rt.faults, key=lambda f: f.at)
        later = tuple(f for f in pending if f.at > t and (deleted is None or f.at <= deleted))
        for f in pending:
            if f.at <= t:
                rt = _apply(rt, f, profile)
        if rt.faults != later:
            rt = replace(rt, faults=later)
    rt = _sync_images(rt, spec, profile, t)

    views = [(c, _view(c, profile, t)) for c in rt.containers]
    if readiness:
        views = [(c, _with_readiness(c, v, profile, readiness)) for c, v in views]
    if deleted is None:
        status = build_status(pod, views, failed=rt.failed_at is not None, t=t)
        wakes = [v.next_at for _, v in views if v.next_at is not None] + [f.at for f in later]
        return _step(pod, status, rt, min(wakes, default=None))
    stops = schedule(pod, views, profile, deleted, now, rt.stops)
    if stops != rt.stops:
        rt = replace(rt, stops=stops)
    views = [(c, stopped_view(v, s) if s.finished_at <= now else v) for (c, v), s in zip(views, stops, strict=True)]
    stopping = [s.finished_at for s in stops if s.finished_at > now]
    phase = None if stopping or rt.failed_at is not None else terminal_phase(stops)
    status = build_status(pod, views, failed=rt.failed_at is not None, t=t, terminal=phase)
    remove_at = removal_time(pod, profile, stops)
    assert remove_at is not None
    if now >= remove_at:
        return _step(pod, status, rt, None, remove=True)
    return _step(pod, status, rt, min(stopping, default=remove_at), terminating=True)


def _step(pod: Obj, status: Obj, rt: PodRuntime, wake_at: float | None, *, remove: bool = False,
          terminating: bool = False) -> KubeletStep:
    old = pod.get("status")
    terminating = terminating or remove
    if status == old:
        return KubeletStep(status=None, runtime=rt, wake_at=wake_at, remove=remove, terminating=terminating)
    return KubeletStep(status=status, runtime=rt, wake_at=wake_at, remove=remove, old_status=old,
                       terminating=terminating)
