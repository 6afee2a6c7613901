"""The process runtime as a kubelet of the wall-clock driver: pods whose image matches run as real local processes.

``WallDriver`` hands this adapter every pod the runtime runs (``matches``) instead of its simulated kubelet, and
every claim deletion. The adapter is the kubelet's loop around ``ProcessRuntime`` (kubelet/process/runtime.py):

- a pod is looked at when someone other than the kubelet changed it, and on every tick (process exits and probe
  results are only noticed by looking); its status goes back through the store with ``update_status``, and a
  terminating pod whose process stopped (SIGTERM, the grace period, SIGKILL) is removed with grace 0, as the
  kubelet confirms a deletion;
- a claim's deletion reaches ``claim_deleted``: the member's data directory goes with its claim and only then;
- member Leases are written from each etcd member's ``/v3/maintenance/status`` (holderIdentity in etcd-druid's
  format, reference §1.4), labelled ``rollwise.dev/member-of: <set>`` (the label the driver watches) and owned by
  the set; ZooKeeper, NATS and Patroni members have no such agent (a role probe asks them);
- the leader-transfer hook (``rollwise.api.leader_transfer``) is answered as a member's agent would: when a member
  pod newly names a member to hand leadership to, the store's hand-over is sent (etcd's MoveLeader, ``etcdctl
  move-leader``; NATS' meta-leader step-down; Patroni's switchover; ZooKeeper has none, so the controller's timeout
  ends the wait), once per request, off the event loop; a set whose hand-over is the controller's driver's own
  (``rollwise.dev/leader-transfer: patroni``) is left to it (runtime/hand_overs.py);
- ``stop()`` stops every process: nothing outlives the driver's owner.

Which pods: a pod is run here when a container image matches the pattern and a StatefulSet controls it (the
member's identity and initial cluster come from the set); the choice is kept for the pod's life, so a pod orphaned
later (``--cascade=orphan``) still has its process stopped here. Other pods stay with the simulated kubelet.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import ApiStatusError, Conflict, FieldError, Invalid, NotFound
from rollwise.api.leader_transfer import requested_at, transfer_target
from rollwise.api.leases import MEMBER_OF_LABEL
from rollwise.api.meta import (
    Obj,
    annotations_of,
    controller_of,
    deletion_timestamp,
    name_of,
    namespace_of,
    uid_of,
)
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import POD
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.quorum.settings import DEFAULT_LEASE_TEMPLATE, LEASE_TEMPLATE, read_settings
from rollwise.kubelet.process.gateway import GatewayError
from rollwise.kubelet.process.runtime import FAULTS as RUNTIME_FAULTS
from rollwise.kubelet.process.runtime import MemberLease, ProcessRuntime
from rollwise.kubelet.process.runtimes import Runtimes
from rollwise.kubelet.process.stores import StoreError
from rollwise.kubelet.status import Note, status_notes
from rollwise.runtime.setkeys import set_resource

__all__ = ["KUBELET", "ProcessKubelet"]

log = logging.getLogger("rollwise.processes")

KUBELET = "kubelet"
LEASE = "Lease"


@dataclass(slots=True)
class _Pod:
    where: tuple[str, str]
    sts: Obj  # the controlling set, as last seen (kept after the set is gone: its process still has to stop)


class ProcessKubelet:
    """Runs on the driver's event loop: ``start()`` once the loop runs, ``on_change`` for every change the driver
    routes here, ``stop()`` last."""

    def __init__(self, runtime: ProcessRuntime | Runtimes, cluster: MemoryCluster, *, pump: Callable[[], None],
                 clock: Callable[[], float], tick_seconds: float = 0.05) -> None:
        self.runtime = runtime
        self.cluster = cluster
        self.pump = pump
        self.clock = clock
        self.tick_seconds = tick_seconds
        runtime.clock = clock  # probe times land in pod status: the store's clock, not the runtime's own
        self._pods: dict[str, _Pod] = {}
        self._renewed: dict[tuple[str, str], tuple[str, float]] = {}
        self._transfers: set[tuple[str, str, float | None]] = set()  # leader-transfer requests acted on
        # Per pod uid, why its process cannot start, as last logged: the tick retries every ``tick_seconds`` and
        # a data directory PostgreSQL's user cannot enter (kubelet/process/patroni.py) stays so until someone acts.
        self._cannot_start: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._stopped = False
        # The Events a kubelet writes about a pod (Started, Killing, BackOff, Unhealthy): the driver's, so that
        # `kubectl describe pod` reads the same for a process as for a simulated container.
        self.notes: Callable[[Obj, tuple[Note, ...]], None] | None = None
        # Pods left to the simulated kubelet whatever their image (the members of a set bound to a quorum model).
        self.excluded: Callable[[Obj], bool] = lambda _pod: False

    # -- the driver's interface --------------------------------------------------------------------------------

    def matches(self, pod: Obj) -> bool:
        if uid_of(pod) in self._pods:
            return True
        ref = controller_of(pod)
        return ref is not None and ref.get("kind") == "StatefulSet" and self.runtime.matches(pod) \
            and not self.excluded(pod)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        for pod in self.cluster.list(POD):
            if self.matches(pod):
                self._adopt(pod)
        self._timer = self._loop.call_later(0, self._tick)

    def stop(self) -> None:
        """Stop every process (SIGTERM, then SIGKILL) and the probers; data directories stay with their claims."""
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
        self.runtime.close()

    def on_change(self, ch: Change) -> None:
        if self._stopped:
            return
        if ch.kind == "PersistentVolumeClaim" and ch.type == "DELETED":
            self.runtime.claim_deleted(ch.namespace, ch.name)
        elif ch.kind == "Pod":
            uid = uid_of(ch.obj)
            if ch.type == "DELETED":
                self._cannot_start.pop(uid, None)
                if self._pods.pop(uid, None) is not None:
                    self.runtime.pod_removed(ch.obj)
            elif ch.actor != KUBELET and self.matches(ch.obj) and self._adopt(ch.obj) and self._loop is not None:
                self._loop.call_soon(self._sync, uid)

    def fault(self, pod: Obj, fault: str) -> None:
        """A pod fault for a member process (``kubelet.process.runtime.FAULTS``: SIGKILL once, crash-loop, fail,
        recover), then a sync so its status shows it. Invalid for a fault a process cannot take."""
        uid = uid_of(pod)
        if fault not in RUNTIME_FAULTS:
            raise Invalid(f"unknown pod fault {fault!r} for a pod run as a process", errors=[FieldError(
                path="fault", kind="Unsupported value", value=fault,
                rule="supported values: " + ", ".join(f'"{f}"' for f in RUNTIME_FAULTS))])
        if uid not in self._pods and not self._adopt(pod):
            raise Conflict(f"pod {name_of(pod)}: no StatefulSet controls it, so no process runs it")
        try:
            self.runtime.fault(pod, fault, self.clock())
        except KeyError as err:  # adopted, but its process was never started (the kubelet has not synced it)
            raise Conflict(f"pod {name_of(pod)}: its process is not running yet") from err
        self._sync(uid)

    # -- the kubelet loop --------------------------------------------------------------------------------------

    def _adopt(self, pod: Obj) -> bool:
        """Remember the pod and its set; False while no set controls it (a pod created ahead of its set)."""
        uid = uid_of(pod)
        sts = self._set_of(pod)
        if sts is not None:
            self._pods[uid] = _Pod(where=(namespace_of(pod), name_of(pod)), sts=sts)
        return uid in self._pods

    def _set_of(self, pod: Obj) -> Obj | None:
        ref = controller_of(pod)
        if ref is None:
            return None
        try:
            sts = self.cluster.get(set_resource(ref), namespace_of(pod), str(ref.get("name")))
        except NotFound:
            return None
        return sts if uid_of(sts) == ref.get("uid") else None

    def _tick(self) -> None:
        self._timer = None
        if self._stopped:
            return
        try:
            for uid in list(self._pods):
                self._sync(uid)
            self._leases()
        finally:
            if not self._stopped and self._loop is not None:
                self._timer = self._loop.call_later(self.tick_seconds, self._tick)

    def _sync(self, uid: str) -> None:
        entry = self._pods.get(uid)
        if entry is None or self._stopped:
            return
        try:
            pod = self.cluster.get(POD, *entry.where)
        except NotFound:
            pod = None
        if pod is None or uid_of(pod) != uid:  # removed, or replaced under its name: the feed says DELETED soon
            return
        entry.sts = self._set_of(pod) or entry.sts
        if read_settings(entry.sts)[0].hand_over is None:  # else the controller's driver sends it (hand_overs.py)
            self._answer_transfer(pod)
        try:
            result = self.runtime.sync(pod, entry.sts, self.clock())
        except (OSError, ValueError) as err:  # cannot start (no binary, no disk): the pod stays as it is
            self._report_cannot_start(uid, entry, str(err))
            return
        self._cannot_start.pop(uid, None)
        stopping = terminating(pod)
        if self.notes is not None and (result.status is not None or stopping):
            self.notes(pod, () if result.status is None
                       else status_notes(pod.get("status"), result.status, stopping=stopping))
        try:
            if result.status is not None:
                self.cluster.update_status({**pod, "status": result.status}, actor=KUBELET)
            if result.remove:
                self.cluster.delete(POD, *entry.where, grace_period_seconds=0, actor=KUBELET)
        except ApiStatusError as err:  # someone wrote the pod meanwhile: the next tick syncs again
            log.debug("kubelet write for %s/%s failed: %s", *entry.where, err)
        self.pump()

    def _report_cannot_start(self, uid: str, entry: _Pod, reason: str) -> None:
        """Warn once per pod and reason: the same reason on the next ticks is logged at debug level only, a new
        reason (or the same one after the process started meanwhile) is warned again."""
        if self._cannot_start.get(uid) == reason:
            log.debug("pod %s/%s still cannot start: %s", *entry.where, reason)
            return
        self._cannot_start[uid] = reason
        log.warning("pod %s/%s: %s", *entry.where, reason)

    def _answer_transfer(self, pod: Obj) -> None:
        """The member's agent for the leader-transfer hook: MoveLeader to the named member, once per request (a
        request is its pod, target and time). etcd answers in about a heartbeat; a thread keeps the loop free."""
        target = transfer_target(pod)
        if target is None or terminating(pod) or self._loop is None:
            return
        key = (uid_of(pod), target, requested_at(pod))
        if key in self._transfers:
            return
        self._transfers.add(key)
        where = (namespace_of(pod), name_of(pod))
        done = self._loop.run_in_executor(None, self.runtime.move_leader, *where, target)
        done.add_done_callback(lambda f: self._transferred(where, target, f))

    @staticmethod
    def _transferred(where: tuple[str, str], target: str, done: asyncio.Future[None]) -> None:
        err = None if done.cancelled() else done.exception()
        if done.cancelled():
            return  # the driver stopped first
        if err is None:
            log.info("member %s/%s handed leadership to %s", *where, target)
        elif isinstance(err, GatewayError | StoreError | KeyError):
            # Not the leader any more, the target not ready: the controller's timeout bounds the wait.
            log.warning("member %s/%s could not hand leadership to %s: %s", *where, target, err)
        else:
            log.error("leader transfer of %s/%s to %s failed", *where, target, exc_info=err)

    def _leases(self) -> None:
        """etcd-backup-restore's heartbeat: renew each member's Lease every ``heartbeat_seconds``, at once when its
        role changes (reference §1.4)."""
        now = self.clock()
        for lease in self.runtime.member_leases():
            sts = next((e.sts for e in self._pods.values() if e.where == (lease.namespace, lease.name)), None)
            if sts is None:
                continue
            name = (annotations_of(sts).get(LEASE_TEMPLATE) or DEFAULT_LEASE_TEMPLATE).replace("{pod}", lease.name)
            last = self._renewed.get((lease.namespace, name))
            if last is not None and last[0] == lease.holder and now - last[1] < self.runtime.probe.heartbeat_seconds:
                continue
            try:
                self._write_lease(sts, lease, name, now)
            except ApiStatusError as err:
                log.debug("lease %s/%s not written: %s", lease.namespace, name, err)
                continue
            self._renewed[(lease.namespace, name)] = (lease.holder, now)
        self.pump()

    def _write_lease(self, sts: Obj, lease: MemberLease, name: str, now: float) -> None:
        spec: dict[str, Any] = {"holderIdentity": lease.holder, "renewTime": now}
        try:
            self.cluster.get(LEASE, lease.namespace, name)
        except NotFound:
            owner = {"apiVersion": sts.get("apiVersion", "apps/v1"), "kind": "StatefulSet", "name": name_of(sts),
                     "uid": uid_of(sts)}
            self.cluster.create({"apiVersion": "coordination.k8s.io/v1", "kind": LEASE,
                                 "metadata": {"name": name, "namespace": lease.namespace,
                                              "labels": {MEMBER_OF_LABEL: lease.set_name},
                                              "ownerReferences": [owner]},
                                 "spec": {**spec, "acquireTime": now}}, actor=KUBELET)
            return
        self.cluster.patch(LEASE, lease.namespace, name, {"spec": spec}, actor=KUBELET)



def terminating(pod: Obj) -> bool:
    return deletion_timestamp(pod) is not None
