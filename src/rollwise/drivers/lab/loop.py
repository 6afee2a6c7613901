"""A small wall-clock loop: the pure controllers over a memory store whose etcd pods are real processes.

TEMPORARY: this stands in for the wall-clock driver of ``rollwise up`` until that exists; it will be replaced by
it, with ``ProcessRuntime`` plugged in where ``up`` runs the simulated kubelet for matching pods. It is kept small
on purpose: one thread, one pass every ``tick`` seconds —

1. drain the store's change feed: a pod, Lease or (non-status) set change marks its set dirty; a deleted pod or
   claim is passed to the runtime; the same feed goes to the simulator's ``Recorder``, so the real run yields a
   result document of spec/simulate.md (events, summary) that ``cli/plot.py`` can draw;
2. reconcile each dirty set, or one whose requeue time has come: ``reconcile`` (statefulset) then
   ``reconcile_quorum`` (DEP-07), plans executed by ``drivers/execute.py`` like the simulator does;
3. ``ProcessRuntime.sync`` for every pod: status written back as the kubelet would, terminated pods removed;
4. member Leases written from each live member's status (etcd-backup-restore's heartbeat).

Time is the lab's own monotonic clock in seconds since the loop started; the store stamps objects with it.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.defaults import apply_defaults
from rollwise.api.errors import ApiStatusError, Invalid, NotFound
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, annotations_of, controller_of, name_of, namespace_of, uid_of
from rollwise.api.validation import validate_statefulset
from rollwise.cluster.memory import MemoryCluster
from rollwise.controllers.quorum import reconcile_quorum
from rollwise.controllers.statefulset import reconcile
from rollwise.drivers.execute import ControllerEvent, execute
from rollwise.drivers.sim.record import Recorder
from rollwise.drivers.sim.strategy_override import QUORUM_AWARE_ANNOTATION
from rollwise.drivers.views import set_view
from rollwise.kubelet.process.runtime import ProcessRuntime

__all__ = ["KUBELET", "QUORUM_CONTROLLER", "STATEFULSET_CONTROLLER", "LabLoop"]

STATEFULSET_CONTROLLER = "statefulset-controller"
QUORUM_CONTROLLER = "quorum-aware-controller"
KUBELET = "kubelet"
MEMBER_OF_LABEL = "rollwise.dev/member-of"  # the simulator's Lease label: which set a member Lease belongs to

SetKey = tuple[str, str]


class LabLoop:
    def __init__(self, runtime: ProcessRuntime, *, gates: FeatureGates, tick: float = 0.05,
                 clock: Callable[[], float] | None = None) -> None:
        origin = time.monotonic()
        self.clock = clock or (lambda: time.monotonic() - origin)
        self.runtime, self.gates, self.tick = runtime, gates, tick
        self.cluster = MemoryCluster(clock=self.clock, admit={"StatefulSet": self._admit_set})
        self.recorder = Recorder(controllers=frozenset((STATEFULSET_CONTROLLER, QUORUM_CONTROLLER)))
        self.controller_events: list[tuple[float, str, ControllerEvent]] = []
        self._cursor = 0
        self._dirty: set[SetKey] = set()
        self._requeue: dict[SetKey, float] = {}

    def _admit_set(self, new: Obj, old: Obj | None) -> Obj:
        defaulted = apply_defaults(new, gates=self.gates)
        errors = validate_statefulset(defaulted, old=old, gates=self.gates)
        if errors:
            raise Invalid(f"StatefulSet.apps \"{name_of(new)}\" is invalid: " + "; ".join(map(str, errors)),
                          errors=errors)
        return defaulted

    # -- what a scenario does ------------------------------------------------------------------------------------

    def create(self, obj: Obj) -> Obj:
        return self.cluster.create(copy.deepcopy(obj), actor="user")

    def patch_set(self, name: str, merge: Mapping[str, Any], namespace: str = "default") -> Obj:
        return self.cluster.patch("StatefulSet", namespace, name, merge, actor="user")

    def pod_fault(self, pod_name: str, fault: str, namespace: str = "default") -> None:
        pod = self.cluster.get("Pod", namespace, pod_name)
        self.runtime.fault(pod, fault, self.clock())

    def run_until(self, done: Callable[[], bool], *, timeout: float) -> bool:
        """Run passes until ``done()`` holds (True) or ``timeout`` seconds pass (False)."""
        end = self.clock() + timeout
        while True:
            began = self.clock()
            self.step()
            if done():
                return True
            if self.clock() >= end:
                return False
            time.sleep(max(0.0, began + self.tick - self.clock()))

    # -- one pass ------------------------------------------------------------------------------------------------

    def step(self) -> None:
        self._drain()
        now = self.clock()
        due = {k for k, t in self._requeue.items() if t <= now}
        for key in sorted(self._dirty | due):
            self._requeue.pop(key, None)
            self._reconcile(key)
            self._drain()
        self._kubelet()
        self._drain()
        self._leases()
        self._drain()
        now = self.clock()
        sets = self.cluster.list("StatefulSet")
        self.recorder.sample(now, sets, {name_of(s): self.pods_of(s) for s in sets})

    def pods_of(self, sts: Obj) -> list[Obj]:
        return [p for p in self.cluster.list("Pod", namespace_of(sts))
                if (controller_of(p) or {}).get("uid") == uid_of(sts)]

    def _drain(self) -> None:
        changes, self._cursor = self.cluster.changes_since(self._cursor)
        for ch in changes:
            self.recorder.on_change(ch)
            if ch.kind == "Pod":
                if ch.type == "DELETED":
                    self.runtime.pod_removed(ch.obj)
                ref = controller_of(ch.obj)
                if ref is not None and ref.get("kind") == "StatefulSet":
                    self._dirty.add((ch.namespace, str(ref["name"])))
            elif ch.kind == "PersistentVolumeClaim" and ch.type == "DELETED":
                self.runtime.claim_deleted(ch.namespace, ch.name)
            elif ch.kind == "Lease":
                owner = (ch.obj.get("metadata", {}).get("labels") or {}).get(MEMBER_OF_LABEL)
                if owner:
                    self._dirty.add((ch.namespace, owner))
            elif ch.kind == "StatefulSet" and ch.type != "DELETED" and ch.actor not in (
                    STATEFULSET_CONTROLLER, QUORUM_CONTROLLER):
                self._dirty.add((ch.namespace, ch.name))
        self.cluster.compact(self._cursor)

    def _reconcile(self, key: SetKey) -> None:
        self._dirty.discard(key)
        try:
            sts = self.cluster.get("StatefulSet", *key)
        except NotFound:
            return
        for actor, decide in ((STATEFULSET_CONTROLLER, reconcile), (QUORUM_CONTROLLER, reconcile_quorum)):
            if actor == QUORUM_CONTROLLER:
                if not annotations_of(sts).get(QUORUM_AWARE_ANNOTATION):
                    break
                sts = self.cluster.get("StatefulSet", *key)  # after the statefulset controller's writes
            now = self.clock()
            plan = decide(set_view(self.cluster, sts, now=now, gates=self.gates))
            outcome = execute(plan, self.cluster, sts=sts, actor=actor, emit=self._recorder_for(actor))
            delay = plan.requeue_after
            if outcome.error is not None:
                delay = 0.5 if delay is None else min(delay, 0.5)  # retry soon; the store does not fail for long
            if delay is not None:
                at = now + delay
                self._requeue[key] = min(at, self._requeue.get(key, at))
            if outcome.error is not None:
                break

    def _recorder_for(self, actor: str) -> Callable[[ControllerEvent], None]:
        def emit(ev: ControllerEvent) -> None:
            self.controller_events.append((self.clock(), actor, ev))
        return emit

    def _kubelet(self) -> None:
        sets = {uid_of(s): s for s in self.cluster.list("StatefulSet")}
        for pod in self.cluster.list("Pod"):
            sts = sets.get(str((controller_of(pod) or {}).get("uid")))
            if sts is None or not self.runtime.matches(pod):
                continue  # only set-owned etcd pods run here; anything else is left to another kubelet
            result = self.runtime.sync(pod, sts, self.clock())
            try:
                if result.remove:
                    self.cluster.delete("Pod", namespace_of(pod), name_of(pod), grace_period_seconds=0,
                                        actor=KUBELET)
                elif result.status is not None:
                    self.cluster.update_status({**pod, "status": result.status}, actor=KUBELET)
            except ApiStatusError:
                continue  # a conflict with a controller's write: the next pass syncs again

    def _leases(self) -> None:
        for lease in self.runtime.member_leases():
            spec = {"holderIdentity": lease.holder, "renewTime": self.clock()}
            try:
                current = self.cluster.get("Lease", lease.namespace, lease.name)
            except NotFound:
                self.cluster.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                     "metadata": {"name": lease.name, "namespace": lease.namespace,
                                                  "labels": {MEMBER_OF_LABEL: lease.set_name}},
                                     "spec": spec}, actor=KUBELET)
                continue
            if (current.get("spec") or {}).get("holderIdentity") != lease.holder:
                self.cluster.update({**current, "spec": {**(current.get("spec") or {}), **spec}}, actor=KUBELET)

    def close(self) -> None:
        self.runtime.close()
