"""The wall-clock driver: the simulated kubelet and rollwise's controllers on asyncio timers (``rollwise up``).

The controllers run in the controller core (``runtime``), as in the simulator, on a scheduler over the wall
clock: a change to a set or to one of its pods adds the set to the work queue and a reconcile runs on the next loop
turn (changes coalesce); ``Plan.requeue_after`` and failure back-off become ``call_later`` timers. The kubelet is
the simulator's (``kubelet/loop.py``) on the same clock: it looks at a pod when someone other than itself changed
it, and again at the time ``advance`` asks for; here it also writes the Events a scheduler and a kubelet write
(``local/events.py``), and looks again shortly at a pod whose status write a client's change refused. Simulated
durations (kubelet start and ready delays, back-offs, termination) are divided by ``speed``; the clock itself is
never warped, because kubectl computes AGE from it and an external operator's ``minReadySeconds`` and Lease timing
read it too.

The driver writes through the store and then calls ``pump`` so watchers (and the driver itself, through ``listen``)
see the change.

With ``audit``, the controllers' writes go to the audit log too, as a cluster's controller-manager requests do
(``local/audited.py``).

With ``processes`` (``local/processes.py``), pods whose image matches its pattern run as real local processes
instead: the driver routes their changes, and every claim deletion, to it, and stops it with itself.

With ``apps`` (``up --kubelet FILE``'s ``apps.<set>: {model: quorum, ...}``), the sets of those names (in any
namespace, each namespace its own cluster) run the quorum model exactly as the simulator runs it, through the one
binding (``kubelet/quorum_binding.py``): its durations are divided by ``speed`` like the kubelet's, its member Leases go
to the store, and its events become Kubernetes Events on the set, so ``kubectl get events`` shows elections. The
pods of a bound set always run in the simulated kubelet, even when their image matches ``--process-images``: naming
a set in the kubelet file asks for the model.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.errors import Conflict, FieldError, Invalid
from rollwise.api.features import FeatureGates
from rollwise.api.meta import (
    Obj,
    uid_of,
)
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import LEASE, POD, PVC, STATEFULSET_KINDS, GroupKind
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.kubelet.agent import FAULTS
from rollwise.kubelet.loop import Kubelet
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.kubelet.quorum import QuorumEvent
from rollwise.kubelet.quorum_binding import LEASE_WRITER, QuorumModels, member_set
from rollwise.kubelet.quorum_probe import QuorumParams
from rollwise.kubelet.volumes import VolumeExpander
from rollwise.local.audited import AuditedCluster
from rollwise.local.events import KubeletEvents, quorum_event
from rollwise.local.hosted import LocalControllers
from rollwise.local.processes import ProcessKubelet
from rollwise.local.standdown import OperatorLeases
from rollwise.runtime.actors import QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.runtime.clock import EpochClock, TimerHandle
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.hand_overs import HandOvers
from rollwise.runtime.reconciler import SetController
from rollwise.runtime.recorder import EventRecorder, StoreEventSink
from rollwise.runtime.registrations import ANALYSIS, QUORUM, KindController, Registration, up_kinds
from rollwise.runtime.role_probes import RoleProbes
from rollwise.runtime.routing import ClusterSets
from rollwise.runtime.setkeys import SetKey, set_key
from rollwise.runtime.trace import DecisionLog

__all__ = ["WallDriver", "scaled_params", "scaled_profile"]

log = logging.getLogger("rollwise.wall")

_BACKOFF_MAX = 300.0
_KUBELET_RETRY = 0.05
_ORPHAN_SECONDS = 0.1
"""Wall seconds from an Orphan delete to the collector's orphaning step (cluster/store/memory_deletion.py): a cluster's
garbage collector acts once its informers saw the deletionTimestamp, a few to a hundred milliseconds later, and
meanwhile every controller sees the owner as being deleted. Not divided by ``speed``: no workload timing."""
"""Seconds before the kubelet looks again at a pod whose status write was refused (a client changed it meanwhile)."""


def scaled_profile(profile: KubeletProfile, speed: float) -> KubeletProfile:
    """The profile with every simulated duration divided by ``speed``."""
    if speed == 1:
        return profile
    names = ("start_seconds", "ready_seconds", "termination_seconds", "stop_seconds", "crash_run_seconds",
             "crash_exited_seconds", "crash_backoff_seconds", "crash_backoff_max_seconds", "pull_error_seconds",
             "pull_backoff_seconds", "pull_backoff_max_seconds", "kill_restart_seconds")
    images = {k: dataclasses.replace(
        v, start_seconds=None if v.start_seconds is None else v.start_seconds / speed,
        ready_seconds=None if v.ready_seconds is None else v.ready_seconds / speed,
        stop_seconds=None if v.stop_seconds is None else v.stop_seconds / speed)
        for k, v in profile.images.items()}
    return dataclasses.replace(profile, images=images, **{n: getattr(profile, n) / speed for n in names})


def scaled_params(params: QuorumParams, speed: float) -> QuorumParams:
    """The quorum model's durations divided by ``speed`` (the failure threshold is a count and stays)."""
    return dataclasses.replace(
        params, election_seconds=params.election_seconds / speed, lease_lag_seconds=params.lease_lag_seconds / speed,
        probe_initial_delay_seconds=params.probe_initial_delay_seconds / speed,
        probe_period_seconds=params.probe_period_seconds / speed)


class WallDriver:
    """Runs on the current event loop; ``start()`` after the loop runs, ``stop()`` cancels every timer."""

    def __init__(self, cluster: MemoryCluster, *, listen: Callable[[Callable[[Change], None]], None],
                 pump: Callable[[], None], profile: KubeletProfile | None = None, speed: float = 1.0,
                 gates: FeatureGates | None = None, clock: Callable[[], float] = time.time,
                 statefulset_kinds: tuple[GroupKind, ...] = STATEFULSET_KINDS, kubelet: bool = True,
                 quorum: bool = True, objects: tuple[KindController, ...] = (ANALYSIS,),
                 processes: ProcessKubelet | None = None,
                 audit: Callable[[dict[str, Any]], None] | None = None,
                 apps: Mapping[str, QuorumParams] | None = None, trace: DecisionLog | None = None,
                 announce: Callable[[str], None] = log.info) -> None:
        self.cluster = cluster
        self._sets = ClusterSets(cluster)
        self.changes = ChangeDispatcher()
        """Wakes ``up``'s controllers for each change of the store (runtime/dispatch.py), once they started."""
        self.audit = audit
        self.trace = trace
        self.pump = pump
        self.profile = scaled_profile(profile or KubeletProfile(), speed)
        self.gates = gates or FeatureGates()
        self.clock = clock
        self._statefulset_kinds = statefulset_kinds
        self.quorum_on = quorum
        self._object_rows = objects
        self.objects: LocalControllers | None = None
        """The controllers of objects other than sets that ``up --controllers`` runs (local/hosted.py)."""
        self.kinds = up_kinds(self._runs)
        """The kinds whose sets ``up`` reconciles: those some controller of its runs for (registrations.py)."""
        self.kubelet_on = kubelet
        self.speed = speed
        self.processes = processes
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scheduler: EpochClock | None = None
        self._controller: SetController | None = None
        self._recorder: EventRecorder | None = None
        self._pod_events: KubeletEvents | None = None
        self.kubelet: Kubelet | None = None
        self.volumes: VolumeExpander | None = None
        """Claims whose request grew expand, capacity following after a delay (kubelet/volumes.py)."""
        """The simulated kubelet (kubelet/loop.py), on the driver's clock, for every pod no process runs."""
        self._stopped = False
        self._orphaning: dict[asyncio.TimerHandle, Callable[[], None]] = {}
        self._apps = {name: scaled_params(p, speed) for name, p in (apps or {}).items()}
        self.leases = OperatorLeases(clock, say=announce)
        self._lease_timer: TimerHandle | None = None
        """The operators' Leases: the controllers an operator runs stand down here while it leads (standdown.py)."""
        self.models: QuorumModels | None = None
        """The quorum models of the sets ``apps`` binds (kubelet/quorum_binding.py), on the driver's clock."""
        if processes is not None:  # a set bound to a model runs in the simulated kubelet
            processes.excluded = lambda pod: member_set(pod) in self._apps
        listen(self._on_change)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._scheduler = EpochClock(self._loop, self.clock)
        self.cluster.orphan_later = self._orphan_later
        self.cluster.resume_orphaning()  # an Orphan delete the last run stopped in the middle of
        # Events as a real cluster's clients write them: correlated (a repeat counts onto the earlier Event).
        self._recorder = EventRecorder(StoreEventSink(self.cluster), now=self.clock, wall_time=self.clock)
        # The controllers' writes are audited as a real cluster's controller-manager requests are (local/audited).
        writes = self.cluster if self.audit is None else AuditedCluster(self.cluster, self.audit, clock=self.clock)
        # Wall-clock instants never repeat, so the per-instant settle guard does not apply; after each reconcile
        # its writes are delivered to the watchers.
        self._controller = SetController.inline(writes, clock=self._scheduler, gates=self.gates,
                                                recorder=self._recorder, quorum=self.quorum_on,
                                                backoff_max=_BACKOFF_MAX, settle_guard=False, after_each=self.pump)
        self._controller.stands_down = self._skips
        self.changes.add_sets(self._sets, self._mark_dirty, kinds=self.kinds)
        if self.processes is not None:
            # Role-probed sets whose members run here are asked at the member's own port (role_probes.py).
            self._controller.role_probes = RoleProbes(self.clock, address=self.processes.runtime.probe_address)
        for lease in self.cluster.list(LEASE):
            self._lease_seen(lease, deleted=False)
        if self.trace is not None:
            self._controller.observers.append(self.trace.observer(STATEFULSET_CONTROLLER))
            self._controller.quorum_observers.append(self.trace.observer(QUORUM_CONTROLLER))
        # A Patroni set's hand-over is sent by whoever runs its quorum-aware controller (runtime/hand_overs.py).
        self._controller.hand_overs = HandOvers()
        self.objects = LocalControllers(self.cluster, rows=self._object_rows, clock=self._scheduler, pump=self.pump,
                                        writes=writes, recorder=self._recorder, stands_down=self.leases.stands_down)
        self.objects.start(self.changes)
        self._wake_all()
        if self._apps:
            self.models = QuorumModels(self.cluster, self._apps, clock=self._scheduler, poke_pod=self._kubelet_poke,
                                       emit=self._model_event, after_tick=self.pump)
        self._pod_events = KubeletEvents(self._recorder.record)
        if self.processes is not None:
            self.processes.notes = self._pod_events
            self.processes.start()
        if self.kubelet_on:
            self.kubelet = Kubelet(self.cluster, self._scheduler, self.profile, notes=self._pod_events,
                                   readiness=self.models.readiness_for if self.models is not None else None,
                                   after_tick=self.pump, retry_seconds=_KUBELET_RETRY)
            for pod in self.cluster.list(POD):
                if self.processes is None or not self.processes.matches(pod):
                    self.kubelet.look_at(pod)
            self.volumes = VolumeExpander(self.cluster, self._scheduler, after_tick=self.pump)
            for claim in self.cluster.list(PVC):
                self.volumes.look_at(claim)

    def stop(self) -> None:
        self._stopped = True
        self.cluster.orphan_later = None
        for handle, step in list(self._orphaning.items()):  # none left half-deleted in a data directory
            handle.cancel()
            step()
        self._orphaning.clear()
        if self._controller is not None:
            self._controller.queue.shutdown()
        if self.objects is not None:
            self.objects.stop()
        if self._scheduler is not None:
            self._scheduler.cancel_all()
        if self.kubelet is not None:
            self.kubelet.stop()
        if self.volumes is not None:
            self.volumes.stop()
        if self.models is not None:
            self.models.stop()
        if self.processes is not None:
            self.processes.stop()

    # -- the change feed -------------------------------------------------------------------------------------

    def _on_change(self, ch: Change) -> None:
        if self._loop is None or self._stopped:
            return
        if ch.kind == "Lease":
            self._lease_seen(ch.obj, deleted=ch.type == "DELETED")
        if ch.kind == "PersistentVolumeClaim" and self.processes is not None:
            self.processes.on_change(ch)
        if ch.kind == "PersistentVolumeClaim" and self.volumes is not None:
            self.volumes.claim_changed(ch)
        if ch.kind == "Pod":
            if self.models is not None:
                self.models.pod_changed(ch.obj)
            if self.processes is not None and self.processes.matches(ch.obj):
                self.processes.on_change(ch)
            elif self.kubelet is not None:
                self.kubelet.pod_changed(ch)
            if ch.type == "DELETED" and self._pod_events is not None:
                self._pod_events.forget(uid_of(ch.obj))
        # Which sets and objects a change wakes is the registration table's rule, the same for every driver.
        self.changes.dispatch(ch)

    def _orphan_later(self, step: Callable[[], None]) -> None:
        assert self._loop is not None

        def run() -> None:
            del self._orphaning[handle]
            step()
            self.pump()

        handle = self._loop.call_later(_ORPHAN_SECONDS, run)
        self._orphaning[handle] = step

    # -- the kubelet ----------------------------------------------------------------------------------------

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
        elif self.kubelet is None or self._stopped:
            raise Conflict(f"pod {name}: no kubelet runs here (--controllers turned it off) to take the fault")
        else:
            if fault not in FAULTS:
                raise Invalid(f"unknown pod fault {fault!r}", errors=[FieldError(
                    path="fault", kind="Unsupported value", value=fault, rule=_supported(FAULTS))])
            self.kubelet.fault(pod, fault, container=container)
        return self.cluster.get(POD, namespace, name)

    def _kubelet_poke(self, uid: str) -> None:
        """Look at a pod again soon (an application model changed its readiness)."""
        if self.kubelet is not None:
            self.kubelet.poke(uid)

    def _model_event(self, namespace: str, set_name: str, sts: Obj | None, event: QuorumEvent) -> None:
        if sts is not None and self._recorder is not None:
            self._recorder.record(sts, quorum_event(event), LEASE_WRITER)

    # -- the controllers ---------------------------------------------------------------------------------------

    def _lease_seen(self, lease: Obj, *, deleted: bool) -> None:
        _, resumed = self.leases.seen(lease, deleted=deleted)
        if resumed:
            self._wake_all()
        self._arm_lease_check()

    def _lease_check(self) -> None:
        self._lease_timer = None
        if self.leases.expire():
            self._wake_all()
        self._arm_lease_check()

    def _arm_lease_check(self) -> None:
        """One timer, at the earliest time a leading operator stops leading unless its Lease changes again (a timer
        that fires early finds nothing expired and is armed again)."""
        if self._lease_timer is not None:
            self._lease_timer.cancel()
            self._lease_timer = None
        until = self.leases.next_expiry()
        if until is not None and self._scheduler is not None and not self._stopped:
            self._lease_timer = self._scheduler.call_at(until, self._lease_check)

    def _runs(self, row: Registration, kind: GroupKind) -> bool:
        """Whether ``up --controllers`` turned ``row`` on for sets of ``kind``."""
        return self.quorum_on if row is QUORUM else kind in self._statefulset_kinds

    def _skips(self, row: Registration, key: SetKey) -> bool:
        """``up``'s ``row`` decides nothing for the set: turned off for its kind, or left to a leading operator."""
        return not self._runs(row, key[0]) or self.leases.stands_down(row, key)

    def _wake_all(self) -> None:
        """Every set: ``up``'s controllers resume where an operator left off."""
        for kind in self.kinds:
            for sts in self.cluster.list(kind):
                self._mark_dirty(set_key(sts))
        if self.objects is not None:
            self.objects.wake_all()

    def _mark_dirty(self, key: SetKey) -> None:
        if self._controller is not None and not self._stopped:
            self._controller.queue.add(key)


def _supported(values: Any) -> str:
    return "supported values: " + ", ".join(f'"{v}"' for v in values)
