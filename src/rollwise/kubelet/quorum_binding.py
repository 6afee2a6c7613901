"""The quorum application model bound to a store, on a clock: one binding for the simulator and ``rollwise up``.

A scenario's (or ``up --kubelet`` file's) ``kubelet.apps.<set>: {model: quorum, ...}`` binds the sets of that name to
the pure model of an etcd-like cluster (``rollwise.kubelet.quorum``, spec/simulate.md "Quorum model"); the set of
that name in each namespace is a cluster of its own. The binding keeps each model in step with its member pods:

1. a change to a member pod runs the set's model at that instant, once however many members changed
   (``pod_changed``); the model asks for a wake-up at its next due time (an election, a probe tick, a lease write);
2. the readiness it decides goes to the kubelet (``readiness_for``), which reports the member container's ``ready``
   and the pod's Ready condition from it instead of ``readySeconds``; a member whose readiness changed is poked;
3. its Lease writes go to the store through ``write_member_lease``, the one way member Leases are written (the
   explorer's zero-latency election writes through it too);
4. its events (``QuorumLost``, ``QuorumRestored``, ``LeaderChanged``) go to the driver's ``emit``: the simulator's run
   record, Kubernetes Events on the set in ``up``.

Time is the driver's clock (``runtime/clock.py``): virtual in the simulator, where every run happens at the
kubelet's phase of an instant, epoch seconds in ``up``, where ``after_tick`` delivers the writes to the watchers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.identity import ordinal_range, pod_name
from rollwise.api.leases import MEMBER_OF_LABEL, cluster_id, member_id
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.cluster.protocol import Cluster
from rollwise.controllers.quorum.settings import read_settings
from rollwise.kubelet.quorum import QuorumEvent, QuorumState, figures, leaderless_seconds, observe_pod, step
from rollwise.kubelet.quorum_probe import QuorumParams
from rollwise.runtime.clock import Clock, TimerHandle
from rollwise.runtime.setkeys import find_set

__all__ = ["LEASE_WRITER", "Emit", "QuorumModels", "member_set", "write_member_lease"]

log = logging.getLogger("rollwise.quorum_app")

LEASE_WRITER = "member-heartbeat"
"""Who writes member Leases (etcd-backup-restore's role); its writes are not controller writes."""

Emit = Callable[[str, str, Obj | None, QuorumEvent], None]
"""``emit(namespace, set name, the set or None when it is gone, event)``."""

_Key = tuple[str, str]  # (namespace, set name)


def member_set(pod: Obj) -> str:
    """The name of the set a pod is a member of, as a model binds it: by the pod's name (``<set>-<ordinal>``)."""
    return name_of(pod).rsplit("-", 1)[0]


def write_member_lease(cluster: Cluster, sts: Obj, pod: str, holder: str, now: float) -> bool:
    """Write the member Lease of ``pod`` as its member's heartbeat does: ``holderIdentity`` (``<memberID>:<clusterID>:
    <role>``, ``rollwise.api.leases``) renewed at ``now``. The name is the set's lease template (the quorum-aware
    controller's own rule, ``read_settings``); a new Lease is labelled with its set, so the set's controllers wake on
    it (``runtime/routing.py``), and owned by it, so it goes with the set. False when the store refused (someone
    else's Lease of that name, or one being deleted): the next renewal tries again."""
    namespace = namespace_of(sts)
    name = read_settings(sts)[0].lease_name(pod)
    spec: dict[str, Any] = {"holderIdentity": holder, "renewTime": now}
    try:
        try:
            cluster.get("Lease", namespace, name)
        except NotFound:
            owner = {"apiVersion": sts.get("apiVersion", "apps/v1"), "kind": "StatefulSet", "name": name_of(sts),
                     "uid": uid_of(sts)}
            cluster.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                            "metadata": {"name": name, "namespace": namespace,
                                         "labels": {MEMBER_OF_LABEL: name_of(sts)}, "ownerReferences": [owner]},
                            "spec": {**spec, "acquireTime": now}}, actor=LEASE_WRITER)
            return True
        cluster.patch("Lease", namespace, name, {"spec": spec}, actor=LEASE_WRITER)
    except ApiStatusError as err:
        log.debug("member lease %s/%s not written: %s", namespace, name, err)
        return False
    return True


@dataclass(slots=True)
class _Model:
    """One set's model and what the binding keeps for it."""

    params: QuorumParams
    state: QuorumState = field(default_factory=QuorumState.initial)
    ready: dict[str, tuple[bool, float]] = field(default_factory=dict)
    """Member pod name -> (Ready as the model last decided, since when)."""
    pending: bool = False
    """A run at this instant is already asked for (changes coalesce)."""
    wake_at: float | None = None
    wake: TimerHandle | None = None
    """The timer for ``wake_at`` (None: no wake-up pending)."""


class QuorumModels:
    """The models of every bound set. ``poke_pod(uid)`` asks the kubelet to look at a member again (its readiness
    changed); ``emit`` takes the models' events; ``after_tick`` runs after each run of a model (``up`` delivers its
    writes to the watchers there)."""

    def __init__(self, cluster: Cluster, params: Mapping[str, QuorumParams], *, clock: Clock,
                 poke_pod: Callable[[str], None], emit: Emit, after_tick: Callable[[], None] | None = None) -> None:
        self.cluster = cluster
        self.params = dict(params)
        self.clock = clock
        self.poke_pod = poke_pod
        self.emit = emit
        self.after_tick = after_tick
        self._models: dict[_Key, _Model] = {}
        self._stopped = False

    def stop(self) -> None:
        """Run no model again; cancel every pending wake-up."""
        self._stopped = True
        for model in self._models.values():
            if model.wake is not None:
                model.wake.cancel()
                model.wake = model.wake_at = None

    # -- what the kubelet asks ---------------------------------------------------------------------------------

    def binds(self, pod: Obj) -> bool:
        """The pod is a member of a bound set."""
        return member_set(pod) in self.params

    def readiness_for(self, pod: Obj) -> dict[str, tuple[bool, float]] | None:
        """The member container's readiness as the model decides it (not ready until the model says so); None for
        a pod of no bound set."""
        set_name = member_set(pod)
        if set_name not in self.params:
            return None
        key = (namespace_of(pod), set_name)
        sts = self._set(key)
        container = _container(sts) if sts is not None else None
        if container is None:
            return None
        model = self._models.get(key)
        ready = model.ready if model is not None else {}
        return {container: ready.get(name_of(pod), (False, self.clock.now()))}

    def figures(self, set_name: str, now: float, since: float) -> tuple[float, int]:
        """Seconds without quorum and elections since ``since`` of the set of that name (the simulator binds a name
        used in one namespace only)."""
        state = next((m.state for (_, name), m in self._models.items() if name == set_name), QuorumState.initial())
        return figures(state, now, since=since)

    def leaderless(self, set_name: str, now: float, since: float) -> float:
        """Seconds without a leader since ``since`` of the set of that name (``kubelet.quorum.leaderless_seconds``)."""
        state = next((m.state for (_, name), m in self._models.items() if name == set_name), QuorumState.initial())
        return leaderless_seconds(state, now, since=since)

    # -- running the models ------------------------------------------------------------------------------------

    def pod_changed(self, pod: Obj) -> None:
        """A pod changed: if it is a member of a bound set, run the set's model now (once for this instant)."""
        set_name = member_set(pod)
        if self._stopped or set_name not in self.params:
            return
        key = (namespace_of(pod), set_name)
        model = self._models.get(key)
        if model is None:
            model = self._models[key] = _Model(self.params[set_name])
        if not model.pending:
            model.pending = True
            self.clock.call_at(self.clock.now(), self._run, key)

    def _woken(self, key: _Key) -> None:
        model = self._models[key]
        model.wake = model.wake_at = None
        self._run(key)

    def _set(self, key: _Key) -> Obj | None:
        try:
            return find_set(self.cluster, *key)
        except NotFound:
            return None

    def _run(self, key: _Key) -> None:
        model = self._models[key]
        if self._stopped:
            return
        model.pending = False
        namespace, set_name = key
        # The model refuses time that goes backwards; a wall clock may step back, the model's time does not.
        now = max(self.clock.now(), model.state.at or 0.0)
        sts = self._set(key)
        members: list[Obj] = []
        replicas, container = 0, None
        if sts is not None:
            replicas = int(sts["spec"].get("replicas", 1))
            container = _container(sts)
            for ordinal in ordinal_range(sts):
                try:
                    members.append(self.cluster.get("Pod", namespace, pod_name(set_name, ordinal)))
                except NotFound:
                    continue
        observations = [observe_pod(p, container=container, member_id=member_id(name_of(p))) for p in members]
        result = step(observations, model.state, model.params, replicas=replicas, now=now,
                      cluster_id=cluster_id(set_name))
        model.state = result.state
        for event in result.events:
            self.emit(namespace, set_name, sts, event)
        changed = set()
        for name, ready in result.ready.items():
            if model.ready.get(name, (False, 0.0))[0] != ready:
                model.ready[name] = (ready, now)
                changed.add(name)
        for pod in members:
            if name_of(pod) in changed:
                self.poke_pod(uid_of(pod))
        if sts is not None:
            for member, holder in sorted(result.leases.items()):
                write_member_lease(self.cluster, sts, member, holder, now)
        self._wake(model, key, result.wake_at)
        if self.after_tick is not None:
            self.after_tick()

    def _wake(self, model: _Model, key: _Key, at: float | None) -> None:
        """Run the model again at ``at``: a pending wake-up for that time stays (its place among the timers of that
        instant with it), another is cancelled."""
        if model.wake is not None and model.wake_at == at:
            return
        if model.wake is not None:
            model.wake.cancel()
            model.wake = model.wake_at = None
        if at is not None:
            model.wake, model.wake_at = self.clock.call_at(at, self._woken, key), at


def _container(sts: Obj) -> str | None:
    # The quorum-aware controller's own rule for the member container (the annotation when it names one, else
    # the first container).
    return read_settings(sts)[0].container or None
