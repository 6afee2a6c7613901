"""The quorum application model in ``rollwise up``'s simulated kubelet, on the wall clock.

``up --kubelet FILE`` takes a scenario's ``kubelet:`` block; its ``apps.<set>: {model: quorum, ...}`` entries bind
the sets of that name (in any namespace, each namespace its own cluster) to the simulator's model of an etcd-like
cluster (``rollwise.kubelet.quorum``, spec/simulate.md "Quorum model"), exactly as the simulator runs it
(``sim/quorum_app.py``): every change to a member pod re-runs the model; its readiness goes to the kubelet,
which reports the member container's ``ready`` and the pod's Ready condition from it instead of ``readySeconds``;
its Lease writes (``<memberID>:<clusterID>:<role>``, one Lease per member, labelled with the set so the set's
controllers wake) go to the store; and its events (``QuorumLost``, ``QuorumRestored``, ``LeaderChanged``) become
Kubernetes Events on the set, so ``kubectl get events`` shows elections.

The model's durations (election, probe delay and period, lease lag) are divided by ``--speed`` like the kubelet's.
The pods of a bound set always run in the simulated kubelet, even when their image matches ``--process-images``:
naming a set in the kubelet file asks for the model.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.identity import ordinal_range, pod_name
from rollwise.api.leases import cluster_id, member_id
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.cluster.memory import MemoryCluster
from rollwise.controllers.quorum.settings import read_settings
from rollwise.kubelet.quorum import LEADER_CHANGED, QUORUM_LOST, QuorumEvent, QuorumState, observe_pod, step
from rollwise.kubelet.quorum_probe import QuorumParams
from rollwise.runtime.execute import ControllerEvent
from rollwise.runtime.routing import MEMBER_OF_LABEL
from rollwise.runtime.setkeys import find_set

__all__ = ["LEASE_WRITER", "QuorumModels", "scaled_params"]

log = logging.getLogger("rollwise.wall.quorum")

LEASE_WRITER = "member-heartbeat"
"""Who writes member Leases (etcd-backup-restore's role); as the simulator names it."""

Key = tuple[str, str]  # (namespace, set name)


def scaled_params(params: QuorumParams, speed: float) -> QuorumParams:
    """The model's durations divided by ``speed`` (the failure threshold is a count and stays)."""
    return dataclasses.replace(
        params, election_seconds=params.election_seconds / speed, lease_lag_seconds=params.lease_lag_seconds / speed,
        probe_initial_delay_seconds=params.probe_initial_delay_seconds / speed,
        probe_period_seconds=params.probe_period_seconds / speed)


@dataclass(slots=True)
class _Cluster:
    params: QuorumParams
    state: QuorumState = field(default_factory=QuorumState.initial)
    ready: dict[str, tuple[bool, float]] = field(default_factory=dict)
    soon: bool = False
    wake: asyncio.TimerHandle | None = None
    wake_at: float | None = None


class QuorumModels:
    """The models of every bound set. ``poke_pod(uid)`` asks the kubelet to look at a member again (its readiness
    changed); ``record(set, event)`` writes an Event on the set."""

    def __init__(self, cluster: MemoryCluster, params: Mapping[str, QuorumParams], *, clock: Callable[[], float],
                 pump: Callable[[], None], poke_pod: Callable[[str], None],
                 record: Callable[[Obj, ControllerEvent], None]) -> None:
        self.cluster = cluster
        self.params = dict(params)
        self.clock = clock
        self.pump = pump
        self.poke_pod = poke_pod
        self.record = record
        self._clusters: dict[Key, _Cluster] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def stop(self) -> None:
        self._stopped = True
        for c in self._clusters.values():
            if c.wake is not None:
                c.wake.cancel()

    # -- what the kubelet asks ---------------------------------------------------------------------------------

    def binds(self, pod: Obj) -> bool:
        """The pod is a member of a bound set (by name, as the simulator binds them)."""
        return name_of(pod).rsplit("-", 1)[0] in self.params

    def readiness_for(self, pod: Obj) -> dict[str, tuple[bool, float]] | None:
        """The member container's readiness as the model decides it (not ready until the model says so)."""
        if not self.binds(pod):
            return None
        key = (namespace_of(pod), name_of(pod).rsplit("-", 1)[0])
        sts = self._set(key)
        container = self._container(sts) if sts is not None else None
        if container is None:
            return None
        c = self._clusters.get(key)
        return {container: (c.ready if c is not None else {}).get(name_of(pod), (False, self.clock()))}

    def pod_changed(self, pod: Obj) -> None:
        """A member pod changed: run its set's model on the next loop turn (changes coalesce)."""
        if self._stopped or self._loop is None or not self.binds(pod):
            return
        set_name = name_of(pod).rsplit("-", 1)[0]
        key = (namespace_of(pod), set_name)
        c = self._clusters.setdefault(key, _Cluster(params=self.params[set_name]))
        if not c.soon:
            c.soon = True
            self._loop.call_soon(self._tick, key)

    # -- running the model -------------------------------------------------------------------------------------

    def _set(self, key: Key) -> Obj | None:
        try:
            return find_set(self.cluster, *key)
        except NotFound:
            return None

    @staticmethod
    def _container(sts: Obj) -> str | None:
        # The quorum-aware controller's own rule for the member container (the annotation, else the first).
        return read_settings(sts)[0].container or None

    def _tick(self, key: Key) -> None:
        c = self._clusters.get(key)
        if c is None or self._stopped:
            return
        c.soon = False
        if c.wake is not None:
            c.wake.cancel()
            c.wake, c.wake_at = None, None
        namespace, set_name = key
        # The model refuses time that goes backwards; the wall clock may step back, the model's time does not.
        now = max(self.clock(), c.state.at or 0.0)
        sts = self._set(key)
        members: list[Obj] = []
        replicas, container = 0, None
        if sts is not None:
            replicas = int(sts["spec"].get("replicas", 1))
            container = self._container(sts)
            for ordinal in ordinal_range(sts):
                try:
                    members.append(self.cluster.get("Pod", namespace, pod_name(set_name, ordinal)))
                except NotFound:
                    continue
        observations = [observe_pod(p, container=container, member_id=member_id(name_of(p))) for p in members]
        result = step(observations, c.state, c.params, replicas=replicas, now=now, cluster_id=cluster_id(set_name))
        c.state = result.state
        for name, ready in result.ready.items():
            if c.ready.get(name, (False, 0.0))[0] != ready:
                c.ready[name] = (ready, now)
                for p in members:
                    if name_of(p) == name:
                        self.poke_pod(uid_of(p))
        if sts is not None:
            for event in result.events:
                self.record(sts, _event(event))
            for member, holder in sorted(result.leases.items()):
                self._write_lease(sts, member, holder, now)
        self.pump()
        if result.wake_at is not None and self._loop is not None:
            c.wake_at = result.wake_at
            c.wake = self._loop.call_later(max(0.0, result.wake_at - self.clock()), self._tick, key)

    def _write_lease(self, sts: Obj, pod: str, holder: str, now: float) -> None:
        namespace = namespace_of(sts)
        name = read_settings(sts)[0].lease_name(pod)
        spec: dict[str, Any] = {"holderIdentity": holder, "renewTime": now}
        try:
            try:
                self.cluster.get("Lease", namespace, name)
            except NotFound:
                # Owned by the set, so the Leases go with it (as up's process runtime writes them).
                owner = {"apiVersion": sts.get("apiVersion", "apps/v1"), "kind": "StatefulSet",
                         "name": name_of(sts), "uid": uid_of(sts)}
                self.cluster.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                     "metadata": {"name": name, "namespace": namespace,
                                                  "labels": {MEMBER_OF_LABEL: name_of(sts)},
                                                  "ownerReferences": [owner]},
                                     "spec": {**spec, "acquireTime": now}}, actor=LEASE_WRITER)
                return
            self.cluster.patch("Lease", namespace, name, {"spec": spec}, actor=LEASE_WRITER)
        except ApiStatusError as err:  # someone else's Lease of that name, or being deleted: skip this write
            log.debug("member lease %s/%s not written: %s", namespace, name, err)


def _event(event: QuorumEvent) -> ControllerEvent:
    if event.type == QUORUM_LOST:
        return ControllerEvent(event_type="Warning", reason=event.type,
                               message="fewer than a majority of the members are running: no quorum")
    if event.type == LEADER_CHANGED:
        return ControllerEvent(event_type="Normal", reason=event.type,
                               message=f"{event.pod} is the leader" if event.pod else "no member leads")
    return ControllerEvent(event_type="Normal", reason=event.type, message="a majority of the members runs again")
