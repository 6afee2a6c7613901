"""The wall-clock driver: the simulated kubelet and rollwise's controllers on asyncio timers (``rollwise up``).

The controllers run in the controller core (``runtime``), as in the simulator, on a scheduler over the wall
clock: a change to a set or to one of its pods adds the set to the work queue and a reconcile runs on the next loop
turn (changes coalesce); ``Plan.requeue_after`` and failure back-off become ``call_later`` timers. The kubelet looks
at a pod when someone other than itself changed it, and again at the time ``advance`` asks for. Simulated durations
(kubelet start and ready delays, back-offs, termination) are divided by ``speed``; the clock itself is never warped,
because kubectl computes AGE from it and an external operator's ``minReadySeconds`` and Lease timing read it too.

The driver writes through the store and then calls ``pump`` so watchers (and the driver itself, through ``listen``)
see the change.

With ``audit``, the controllers' writes go to the audit log too, as a cluster's controller-manager requests do
(``local/audited.py``).

With ``processes`` (``local/processes.py``), pods whose image matches its pattern run as real local processes
instead: the driver routes their changes, and every claim deletion, to it, and stops it with itself.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.errors import ApiStatusError, Conflict, FieldError, Invalid, NotFound
from rollwise.api.features import FeatureGates
from rollwise.api.meta import (
    Obj,
    name_of,
    namespace_of,
    uid_of,
)
from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import POD, STATEFULSET_KINDS, GroupKind
from rollwise.kubelet.agent import FAULTS, Note, PodRuntime, advance, apply_fault
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.kubelet.quorum_probe import QuorumParams
from rollwise.local.audited import AuditedCluster
from rollwise.local.processes import ProcessKubelet
from rollwise.local.quorum_app import LEASE_WRITER, QuorumModels, scaled_params
from rollwise.runtime.events import EventRecorder
from rollwise.runtime.execute import ControllerEvent
from rollwise.runtime.instant_queue import AsyncioScheduler, WorkQueue
from rollwise.runtime.reconciler import SetController
from rollwise.runtime.routing import sets_to_wake
from rollwise.runtime.setkeys import SetKey, set_key

__all__ = ["WallDriver", "WallEventRecorder", "WallScheduler", "scaled_profile"]

log = logging.getLogger("rollwise.wall")

KUBELET = "kubelet"
_BACKOFF_MAX = 300.0


def scaled_profile(profile: KubeletProfile, speed: float) -> KubeletProfile:
    """The profile with every simulated duration divided by ``speed``."""
    if speed == 1:
        return profile
    names = ("start_seconds", "ready_seconds", "termination_seconds", "crash_run_seconds", "crash_exited_seconds",
             "crash_backoff_seconds", "crash_backoff_max_seconds", "pull_error_seconds", "pull_backoff_seconds",
             "pull_backoff_max_seconds", "kill_restart_seconds")
    images = {k: dataclasses.replace(
        v, start_seconds=None if v.start_seconds is None else v.start_seconds / speed,
        ready_seconds=None if v.ready_seconds is None else v.ready_seconds / speed)
        for k, v in profile.images.items()}
    return dataclasses.replace(profile, images=images, **{n: getattr(profile, n) / speed for n in names})


@dataclass(slots=True)
class _PodState:
    runtime: PodRuntime = field(default_factory=PodRuntime.initial)
    where: tuple[str, str] = ("", "")
    wake: asyncio.TimerHandle | None = None
    scheduled: bool = False
    killing: bool = False
    wake_at: float | None = None


class WallDriver:
    """Runs on the current event loop; ``start()`` after the loop runs, ``stop()`` cancels every timer."""

    def __init__(self, cluster: MemoryCluster, *, listen: Callable[[Callable[[Change], None]], None],
                 pump: Callable[[], None], profile: KubeletProfile | None = None, speed: float = 1.0,
                 gates: FeatureGates | None = None, clock: Callable[[], float] = time.time,
                 statefulset_kinds: tuple[GroupKind, ...] = STATEFULSET_KINDS, kubelet: bool = True,
                 quorum: bool = True, processes: ProcessKubelet | None = None,
                 audit: Callable[[dict[str, Any]], None] | None = None,
                 apps: Mapping[str, QuorumParams] | None = None) -> None:
        self.cluster = cluster
        self.audit = audit
        self.pump = pump
        self.profile = scaled_profile(profile or KubeletProfile(), speed)
        self.gates = gates or FeatureGates()
        self.clock = clock
        self.kinds = statefulset_kinds
        self.kubelet_on = kubelet
        self.quorum_on = quorum
        self.speed = speed
        self.processes = processes
        self._process_pods: dict[str, _PodState] = {}  # the Events already written about each process pod
        self._pods: dict[str, _PodState] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scheduler: WallScheduler | None = None
        self._controller: SetController | None = None
        self._recorder: WallEventRecorder | None = None
        self._stopped = False
        self.models = QuorumModels(cluster, {name: scaled_params(p, speed) for name, p in (apps or {}).items()},
                                   clock=clock, pump=pump, poke_pod=self._kubelet_poke, record=self._model_event)
        if processes is not None:
            processes.excluded = self.models.binds  # a set bound to a model runs in the simulated kubelet
        listen(self._on_change)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._scheduler = WallScheduler(self._loop, self.clock)
        self._recorder = WallEventRecorder(self.cluster, clock=self.clock)
        # The controllers' writes are audited as a real cluster's controller-manager requests are (local/audited).
        writes = self.cluster if self.audit is None else AuditedCluster(self.cluster, self.audit, clock=self.clock)
        self._controller = SetController(writes, scheduler=self._scheduler, gates=self.gates,
                                         recorder=self._recorder, quorum=self.quorum_on)
        # Wall-clock instants never repeat, so the per-instant settle guard does not apply; writes still pump.
        self._controller.queue = WorkQueue(self._scheduler, self._reconcile, backoff_max=_BACKOFF_MAX,
                                           max_rounds_per_instant=None)
        for kind in self.kinds:
            for sts in self.cluster.list(kind):
                self._mark_dirty(set_key(sts))
        self.models.start(self._loop)
        if self.processes is not None:
            self.processes.notes = self._process_notes
            self.processes.start()
        if self.kubelet_on:
            for pod in self.cluster.list(POD):
                if self.processes is None or not self.processes.matches(pod):
                    self._kubelet_soon(pod)

    def _reconcile(self, key: SetKey) -> None:
        if self._stopped or self._controller is None:
            return
        try:
            self._controller.reconcile(key)
        finally:
            self.pump()

    def stop(self) -> None:
        self._stopped = True
        if self._scheduler is not None:
            self._scheduler.cancel_all()
        for state in self._pods.values():
            if state.wake is not None:
                state.wake.cancel()
        self.models.stop()
        if self.processes is not None:
            self.processes.stop()

    # -- the change feed -------------------------------------------------------------------------------------

    def _on_change(self, ch: Change) -> None:
        if self._loop is None or self._stopped:
            return
        if ch.kind == "PersistentVolumeClaim" and self.processes is not None:
            self.processes.on_change(ch)
        if ch.kind == "Pod":
            self.models.pod_changed(ch.obj)
            if self.processes is not None and self.processes.matches(ch.obj):
                self.processes.on_change(ch)
                if ch.type == "DELETED":
                    self._process_pods.pop(uid_of(ch.obj), None)
            elif self.kubelet_on:
                if ch.type == "DELETED":
                    state = self._pods.pop(uid_of(ch.obj), None)
                    if state is not None and state.wake is not None:
                        state.wake.cancel()
                elif ch.actor != KUBELET:
                    self._kubelet_soon(ch.obj)
        # Which sets a change wakes is the controller core's rule, the same for every driver.
        for key in sets_to_wake(self.cluster, ch):
            if key[0] in self.kinds:
                self._mark_dirty(key)

    # -- the kubelet -----------------------------------------------------------------------------------------

    def _kubelet_soon(self, pod: Obj) -> None:
        uid = uid_of(pod)
        state = self._pods.setdefault(uid, _PodState())
        state.where = (namespace_of(pod), name_of(pod))
        assert self._loop is not None
        self._loop.call_soon(self._kubelet_tick, uid)

    def _kubelet_tick(self, uid: str) -> None:
        state = self._pods.get(uid)
        if state is None or self._stopped:
            return
        try:
            pod = self.cluster.get(POD, *state.where)
        except NotFound:
            self._pods.pop(uid, None)
            return
        if uid_of(pod) != uid:
            return
        now = self.clock()
        step = advance(pod, state.runtime, self.profile, now, readiness=self.models.readiness_for(pod))
        state.runtime = step.runtime
        self._kubelet_events(pod, state, step.notes)
        try:
            if step.status is not None:
                self.cluster.update_status({**pod, "status": step.status}, actor=KUBELET)
            if step.remove:
                self.cluster.delete(POD, *state.where, grace_period_seconds=0, actor=KUBELET)
        except ApiStatusError as err:  # the pod changed under us: look again soon
            log.debug("kubelet write for %s failed: %s", state.where, err)
            step = dataclasses.replace(step, wake_at=now + 0.05, remove=False)
        self.pump()
        if step.remove:
            self._pods.pop(uid, None)
            return
        if state.wake_at != step.wake_at and state.wake is not None:
            state.wake.cancel()
            state.wake = None
        if step.wake_at is not None and state.wake is None:
            assert self._loop is not None
            state.wake_at = step.wake_at
            state.wake = self._loop.call_later(max(0.0, step.wake_at - self.clock()), self._kubelet_wake, uid)

    def _kubelet_events(self, pod: Obj, state: _PodState, notes: tuple[Note, ...]) -> None:
        """The Events a scheduler and kubelet write about a pod (``kubectl describe pod`` shows them)."""
        if self._recorder is None:
            return
        images = {str(c.get("name")): str(c.get("image")) for c in (pod.get("spec") or {}).get("containers") or ()}
        out: list[tuple[str, ControllerEvent]] = []
        if not state.scheduled and not (pod.get("status") or {}).get("containerStatuses"):
            state.scheduled = True
            node = (pod.get("spec") or {}).get("nodeName") or "rollwise-node"
            out.append(("default-scheduler", ControllerEvent(
                event_type="Normal", reason="Scheduled",
                message=f"Successfully assigned {namespace_of(pod)}/{name_of(pod)} to {node}")))
        for note in notes:
            name = note.container or ""
            image = images.get(name, "")
            if note.type == "ContainerWaiting" and note.reason == "ContainerCreating":
                out.append((KUBELET, ControllerEvent(event_type="Normal", reason="Pulling",
                                                     message=f'Pulling image "{image}"')))
            elif note.type == "ContainerWaiting" and note.reason == "ErrImagePull":
                out.append((KUBELET, ControllerEvent(event_type="Warning", reason="Failed",
                                                     message=f'Failed to pull image "{image}": not found')))
            elif note.type == "ContainerWaiting" and note.reason == "ImagePullBackOff":
                out.append((KUBELET, ControllerEvent(event_type="Normal", reason="BackOff",
                                                     message=f'Back-off pulling image "{image}"')))
            elif note.type == "ContainerWaiting" and note.reason == "CrashLoopBackOff":
                out.append((KUBELET, ControllerEvent(
                    event_type="Warning", reason="BackOff",
                    message=f"Back-off restarting failed container {name} in pod {name_of(pod)}")))
            elif note.type == "PodRunning":
                for container, img in images.items():
                    out.append((KUBELET, ControllerEvent(event_type="Normal", reason="Pulled",
                                                         message=f'Container image "{img}" already present')))
                    out.append((KUBELET, ControllerEvent(event_type="Normal", reason="Started",
                                                         message=f"Started container {container}")))
            elif note.type == "PodNotReady":
                out.append((KUBELET, ControllerEvent(event_type="Warning", reason="Unhealthy",
                                                     message="Readiness probe failed")))
        if (pod.get("metadata") or {}).get("deletionTimestamp") is not None and not state.killing:
            state.killing = True
            for container in images:
                out.append((KUBELET, ControllerEvent(event_type="Normal", reason="Killing",
                                                     message=f"Stopping container {container}")))
        for component, ev in out:
            self._recorder.record(pod, ev, component)

    def _process_notes(self, pod: Obj, notes: tuple[Note, ...]) -> None:
        self._kubelet_events(pod, self._process_pods.setdefault(uid_of(pod), _PodState()), notes)

    def pod_fault(self, namespace: str, name: str, fault: str, container: str | None = None) -> Obj:
        """Apply one of the simulator's pod faults (``kubelet.agent.FAULTS``) to the pod now, as a scenario's
        ``podFault`` step does; the pod as it is afterwards. NotFound: no such pod; Invalid: an unknown fault or
        container, or a fault a process pod cannot take; Conflict: no kubelet runs the pod here."""
        pod = self.cluster.get(POD, namespace, name)
        containers = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or ()]
        if container is not None and container not in containers:
            raise Invalid(f"container {container!r} is not in pod {name}",
                          errors=[FieldError(path="container", kind="Unsupported value", value=container,
                                             rule=_supported(containers))])
        if self.processes is not None and self.processes.matches(pod):
            self.processes.fault(pod, fault)
        elif not self.kubelet_on or self._loop is None or self._stopped:
            raise Conflict(f"pod {name}: no kubelet runs here (--controllers turned it off) to take the fault")
        else:
            if fault not in FAULTS:
                raise Invalid(f"unknown pod fault {fault!r}", errors=[FieldError(
                    path="fault", kind="Unsupported value", value=fault, rule=_supported(FAULTS))])
            uid = uid_of(pod)
            state = self._pods.setdefault(uid, _PodState())
            state.where = (namespace, name)
            state.runtime = apply_fault(pod, state.runtime, fault, self.clock(), container=container)
            self._kubelet_tick(uid)
        return self.cluster.get(POD, namespace, name)

    def _kubelet_poke(self, uid: str) -> None:
        """Look at a pod again soon (an application model changed its readiness)."""
        if uid in self._pods and self._loop is not None and not self._stopped:
            self._loop.call_soon(self._kubelet_tick, uid)

    def _model_event(self, sts: Obj, event: ControllerEvent) -> None:
        if self._recorder is not None:
            self._recorder.record(sts, event, LEASE_WRITER)

    def _kubelet_wake(self, uid: str) -> None:
        state = self._pods.get(uid)
        if state is not None:
            state.wake = None
            state.wake_at = None
        self._kubelet_tick(uid)

    # -- the controllers ---------------------------------------------------------------------------------------

    def _mark_dirty(self, key: SetKey) -> None:
        if self._controller is not None and not self._stopped:
            self._controller.queue.add(key)


def _supported(values: Any) -> str:
    return "supported values: " + ", ".join(f'"{v}"' for v in values)


class WallScheduler(AsyncioScheduler):
    """The core's asyncio scheduler on the store's wall clock, remembering its pending calls so that ``stop``
    cancels every one of them."""

    def __init__(self, loop: asyncio.AbstractEventLoop, clock: Callable[[], float]) -> None:
        super().__init__(loop, clock)
        self._handles: set[asyncio.TimerHandle] = set()

    def at(self, t: float, fn: Callable[[], None]) -> asyncio.TimerHandle:
        def run() -> None:
            self._handles.discard(handle)
            fn()

        handle = super().at(t, run)
        self._handles.add(handle)
        return handle

    def cancel(self, handle: Any) -> None:
        super().cancel(handle)
        self._handles.discard(handle)

    def cancel_all(self) -> None:
        for handle in list(self._handles):
            handle.cancel()
        self._handles.clear()


class WallEventRecorder(EventRecorder):
    """Events as a real API server's clients write them: named uniquely across restarts, with the involved
    object's apiVersion (``kubectl events --for`` selects on it) and ``lastTimestamp``/``count`` (LAST SEEN)."""

    def __init__(self, cluster: MemoryCluster, *, clock: Callable[[], float]) -> None:
        super().__init__(cluster, clock=clock)
        self._cluster_w = cluster
        self._clock_w = clock
        self._n = itertools.count(1)

    def record(self, obj: Obj, ev: ControllerEvent, component: str) -> None:
        now = self._clock_w()
        ns = namespace_of(obj)
        try:
            self._cluster_w.create({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": f"{name_of(obj)}.{int(now * 1e6):x}{next(self._n)}", "namespace": ns},
                "involvedObject": {"apiVersion": obj.get("apiVersion", "apps/v1"), "kind": obj.get("kind"),
                                   "name": name_of(obj), "namespace": ns, "uid": uid_of(obj),
                                   "resourceVersion": obj["metadata"].get("resourceVersion", "")},
                "reason": ev.reason, "message": ev.message, "type": ev.event_type,
                "source": {"component": component}, "reportingComponent": component,
                "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            }, actor=component)
        except ApiStatusError as err:  # an event is bookkeeping: never fail the write it reports
            log.debug("event for %s not recorded: %s", name_of(obj), err)
