"""The one quorum-model binding (kubelet/quorum_binding.py) and the one member-Lease write every driver uses."""

from __future__ import annotations

from typing import Any

from step_clock import StepClock

from rollwise.api.errors import Conflict
from rollwise.api.features import FeatureGates
from rollwise.api.leases import LEADER, MEMBER_OF_LABEL, lease_role
from rollwise.api.meta import Obj, name_of
from rollwise.api.predicates import is_ready
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.quorum.settings import LEASE_TEMPLATE, QUORUM_AWARE_POLICY, UPDATE_POLICY
from rollwise.explore.model import Bounds, Move
from rollwise.explore.world import initial_node, successor
from rollwise.kubelet.loop import Kubelet
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.kubelet.quorum import QuorumEvent, QuorumParams
from rollwise.kubelet.quorum_binding import LEASE_WRITER, QuorumModels, write_member_lease

PARAMS = QuorumParams(election_seconds=1, probe_initial_delay_seconds=1, probe_period_seconds=1)


def _pod(name: str, namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "etcd", "image": "etcd:3.5"}]}}


def _set(namespace: str, replicas: int, **annotations: str) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": namespace, "annotations": annotations},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [{"name": "etcd", "image": "etcd:3.5"}]}}}}


class World:
    """A store with the kubelet and the quorum models on one clock; the store's changes go to both after each
    timer, as the drivers deliver them."""

    def __init__(self) -> None:
        self.clock = StepClock()
        self.cluster = MemoryCluster(clock=self.clock.now)
        self.events: list[tuple[str, str, str]] = []
        self.runs = 0
        self.models = QuorumModels(self.cluster, {"db": PARAMS}, clock=self.clock, poke_pod=self._poke,
                                   emit=self._emit, after_tick=self._ran)
        self.kubelet = Kubelet(self.cluster, self.clock, KubeletProfile(start_seconds=1, ready_seconds=1),
                               readiness=self.models.readiness_for)
        self._cursor = 0

    def _poke(self, uid: str) -> None:
        self.kubelet.poke(uid)

    def _emit(self, namespace: str, set_name: str, sts: Obj | None, event: QuorumEvent) -> None:
        self.events.append((namespace, set_name, event.type))

    def _ran(self) -> None:
        self.runs += 1

    def feed(self) -> None:
        changes, self._cursor = self.cluster.changes_since(self._cursor)
        for ch in changes:
            if ch.kind == "Pod":
                self.models.pod_changed(ch.obj)
                self.kubelet.pod_changed(ch)

    def create(self, obj: Obj) -> Obj:
        out = self.cluster.create(obj, actor="user")
        self.feed()
        return out

    def members(self, namespace: str, replicas: int) -> None:
        self.create(_set(namespace, replicas))
        for ordinal in range(replicas):
            self.create(_pod(f"db-{ordinal}", namespace))

    def run_until(self, end: float) -> None:
        self.clock.run_until(end, self.feed)


def test_a_lease_is_created_labelled_and_owned_by_its_set_then_renewed_in_place() -> None:
    cluster = MemoryCluster(clock=lambda: 0.0)
    sts = cluster.create(_set("default", 1, **{LEASE_TEMPLATE: "{pod}-member"}), actor="user")
    assert write_member_lease(cluster, sts, "db-0", "a:b:Leader", 3.0)
    lease = cluster.get("Lease", "default", "db-0-member")
    assert lease["metadata"]["labels"] == {MEMBER_OF_LABEL: "db"}
    assert [o["uid"] for o in lease["metadata"]["ownerReferences"]] == [sts["metadata"]["uid"]]
    assert lease["spec"] == {"holderIdentity": "a:b:Leader", "renewTime": 3.0, "acquireTime": 3.0}
    assert write_member_lease(cluster, sts, "db-0", "a:b:Member", 4.0)
    lease = cluster.get("Lease", "default", "db-0-member")
    assert lease["spec"] == {"holderIdentity": "a:b:Member", "renewTime": 4.0, "acquireTime": 3.0}
    assert cluster.write_count(LEASE_WRITER) == 2


def test_a_refused_lease_write_is_reported_not_raised() -> None:
    cluster = MemoryCluster(clock=lambda: 0.0)
    sts = cluster.create(_set("default", 1), actor="user")
    cluster.inject("create", "Lease", Conflict("someone else's"))
    assert not write_member_lease(cluster, sts, "db-0", "a:b:Leader", 0.0)
    assert cluster.list("Lease") == []


def test_changes_to_members_at_one_instant_run_the_model_once() -> None:
    world = World()
    world.members("default", 3)
    world.clock.run_until(0.0, lambda: None)  # the kubelet's first looks write; their changes are not fed
    assert world.runs == 1


def test_the_sets_of_a_bound_name_are_separate_clusters_one_per_namespace() -> None:
    world = World()
    world.members("a", 3)
    world.members("b", 1)
    world.run_until(30.0)
    for namespace, replicas in (("a", 3), ("b", 1)):
        pods = world.cluster.list("Pod", namespace)
        assert len(pods) == replicas and all(is_ready(p) for p in pods), namespace
        leases = world.cluster.list("Lease", namespace)
        assert sorted(name_of(x) for x in leases) == [f"db-{o}" for o in range(replicas)]
        assert sum(lease_role(x) == LEADER for x in leases) == 1, namespace
        assert (namespace, "db", "LeaderChanged") in world.events
    assert world.models.figures("db", 30.0, 0.0)[1] == 1, "one bootstrap election"


def test_the_explorer_writes_its_member_leases_through_the_binding_under_the_sets_template() -> None:
    manifest: dict[str, Any] = _set("default", 3, **{LEASE_TEMPLATE: "{pod}-member",
                                                     UPDATE_POLICY: QUORUM_AWARE_POLICY})
    manifest["spec"]["updateStrategy"] = {"type": "OnDelete"}
    bounds = Bounds(replicas=3)
    node = initial_node(manifest, gates=FeatureGates(), bounds=bounds)
    cluster = node.cluster.fork()
    for ordinal in range(3):
        cluster.create(_pod(f"db-{ordinal}", "default"), actor="user")
    after = successor(node, cluster, Move(actor="user", kind="create"), bounds=bounds)
    leases = after.cluster.list("Lease", "default")
    assert sorted(name_of(x) for x in leases) == ["db-0-member", "db-1-member", "db-2-member"]
    owner = node.cluster.get(node.facts.resource, "default", "db")["metadata"]["uid"]
    for lease in leases:
        assert lease["metadata"]["labels"] == {MEMBER_OF_LABEL: "db"}
        assert [o["uid"] for o in lease["metadata"]["ownerReferences"]] == [owner]
    assert after.cluster.write_count(LEASE_WRITER) == 3
