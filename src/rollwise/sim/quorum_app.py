"""The quorum application model running inside the simulator (spec/simulate.md, "Quorum model").

For a set with ``kubelet.apps.<set>: {model: quorum}``, this keeps the pure model of ``rollwise.kubelet.quorum``
in step with the pods: every change to a member pod re-runs it, its readiness goes back to the simulated kubelet
(which then reports the member container's ``ready`` and the pod's Ready condition), its Lease writes go to the
store, and its events (``QuorumLost``, ``QuorumRestored``, ``LeaderChanged``) go to the run record.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.errors import NotFound
from rollwise.api.identity import ordinal_range, pod_name
from rollwise.api.leases import cluster_id, member_id
from rollwise.api.meta import Obj, annotations_of, name_of, uid_of
from rollwise.controllers.quorum.settings import read_settings
from rollwise.kubelet.quorum import QuorumState, figures, observe_pod, step
from rollwise.kubelet.quorum_probe import QuorumParams
from rollwise.runtime.setkeys import find_set
from rollwise.sim.context import SimContext
from rollwise.sim.engine import KUBELET

__all__ = ["LEASE_WRITER", "MEMBER_LEASE_ANNOTATION", "QuorumApp"]

LEASE_WRITER = "member-heartbeat"
"""The actor that writes member Leases (etcd-backup-restore's role); its writes are not controller writes."""
MEMBER_LEASE_ANNOTATION = "rollwise.dev/member-lease-template"


class QuorumApp:
    def __init__(self, sim: SimContext, set_name: str, params: QuorumParams, namespace: str = "default") -> None:
        self.sim = sim
        self.set_name = set_name
        self.namespace = namespace
        self.params = params
        self.state = QuorumState.initial()
        self.ready: dict[str, tuple[bool, float]] = {}
        self._scheduled: float | None = None
        self._wake: tuple[float, int] | None = None

    # -- what the kubelet asks ---------------------------------------------------------------------------------

    def container(self, sts: Obj | None = None) -> str | None:
        sts = sts or self._set()
        if sts is None:
            return None
        # The quorum-aware controller's own rule (the annotation when it names a container, else the first).
        return read_settings(sts)[0].container or None

    def readiness_for(self, pod: Obj) -> dict[str, tuple[bool, float]] | None:
        """The member container's readiness as the model decides it (not ready until the model says so)."""
        container = self.container()
        if container is None:
            return None
        return {container: self.ready.get(name_of(pod), (False, self.sim.clock.now))}

    def owns(self, pod: Obj) -> bool:
        return name_of(pod).rsplit("-", 1)[0] == self.set_name

    # -- running the model ---------------------------------------------------------------------------------

    def poke(self) -> None:
        """Something about a member changed: run the model at this instant (once)."""
        now = self.sim.clock.now
        if self._scheduled == now:
            return
        self._scheduled = now
        self.sim.engine.at(now, KUBELET, self.tick)

    def _set(self) -> Obj | None:
        try:
            return find_set(self.sim.cluster, self.namespace, self.set_name)
        except NotFound:
            return None

    def tick(self) -> None:
        self._scheduled = None
        now = self.sim.clock.now
        sts = self._set()
        members: list[Obj] = []
        replicas = 0
        container = None
        if sts is not None:
            replicas = int(sts["spec"].get("replicas", 1))
            container = self.container(sts)
            for ordinal in ordinal_range(sts):
                try:
                    members.append(self.sim.cluster.get("Pod", self.namespace, pod_name(self.set_name, ordinal)))
                except NotFound:
                    continue
        observations = [observe_pod(p, container=container, member_id=member_id(name_of(p))) for p in members]
        result = step(observations, self.state, self.params, replicas=replicas, now=now,
                      cluster_id=cluster_id(self.set_name))
        self.state = result.state
        for event in result.events:
            self.sim.recorder.emit(event.t, event.type, pod=event.pod, statefulSet=self.set_name)
        changed = []
        for name, ready in result.ready.items():
            if self.ready.get(name, (False, 0.0))[0] != ready:
                self.ready[name] = (ready, now)
                changed.append(name)
        for pod in members:
            if name_of(pod) in changed:
                self.sim.kubelet_poke(uid_of(pod))
        if sts is not None:
            for name, holder in sorted(result.leases.items()):
                self._write_lease(sts, name, holder, now)
        self._schedule(result.wake_at)

    def _schedule(self, at: float | None) -> None:
        if self._wake is not None and self._wake[0] == at:
            return
        if self._wake is not None:
            self.sim.engine.cancel(self._wake[1])
            self._wake = None
        if at is not None:
            self._wake = (at, self.sim.engine.at(at, KUBELET, self._woken))

    def _woken(self) -> None:
        self._wake = None
        self.tick()

    def _write_lease(self, sts: Obj, pod: str, holder: str, now: float) -> None:
        template = annotations_of(sts).get(MEMBER_LEASE_ANNOTATION) or "{pod}"
        name = template.replace("{pod}", pod)
        body: dict[str, Any] = {"holderIdentity": holder, "renewTime": now}
        cluster = self.sim.cluster
        try:
            lease = cluster.get("Lease", self.namespace, name)
        except NotFound:
            cluster.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                            "metadata": {"name": name, "namespace": self.namespace,
                                         "labels": {"rollwise.dev/member-of": self.set_name}},
                            "spec": body}, actor=LEASE_WRITER)
            return
        cluster.patch("Lease", self.namespace, name, {"spec": body}, actor=LEASE_WRITER)
        del lease

    def figures(self, now: float, since: float) -> tuple[float, int]:
        return figures(self.state, now, since=since)
