"""The one quorum-model binding (runtime/quorum_app.py) and the one member-Lease write every driver uses."""

from __future__ import annotations

from typing import Any

from rollwise.api.errors import Conflict
from rollwise.api.features import FeatureGates
from rollwise.api.leases import MEMBER_OF_LABEL
from rollwise.api.meta import Obj, name_of
from rollwise.cluster.memory import MemoryCluster
from rollwise.controllers.quorum.settings import LEASE_TEMPLATE, QUORUM_AWARE_POLICY, UPDATE_POLICY
from rollwise.explore.model import Bounds, Move
from rollwise.explore.world import initial_node, successor
from rollwise.kubelet.quorum import QuorumParams
from rollwise.runtime.quorum_app import LEASE_WRITER, write_member_lease

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
