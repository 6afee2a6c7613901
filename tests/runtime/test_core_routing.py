"""Which sets a change wakes: a pod's controller or the sets that may adopt it, a Lease's member set, a set
itself unless the change is a controller's own status write — in a fixed order."""

from __future__ import annotations

from typing import Any

from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.runtime.routing import ClusterSets, sets_to_wake


def _set(api_version: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}}


def _last(store: MemoryCluster) -> Any:
    return store.changes_since(store.cursor - 1)[0][0]


def test_an_orphan_wakes_every_set_that_may_adopt_it_in_order() -> None:
    store = MemoryCluster(clock=lambda: 0.0)
    store.create(_set("apps.rollwise.dev/v1alpha1", "b"))
    store.create(_set("apps/v1", "z"))
    store.create(_set("apps/v1", "a"))
    store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}}})
    assert sets_to_wake(ClusterSets(store), _last(store)) == [
        (STATEFULSET, "default", "a"), (STATEFULSET, "default", "z"), (ROLLWISE_STATEFULSET, "default", "b")]


def test_a_controlled_pod_wakes_its_controller_of_the_right_resource() -> None:
    store = MemoryCluster(clock=lambda: 0.0)
    owner = store.create(_set("apps.rollwise.dev/v1alpha1", "web"))
    store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "ownerReferences": [
        {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "name": "web",
         "uid": owner["metadata"]["uid"], "controller": True}]}})
    assert sets_to_wake(ClusterSets(store), _last(store)) == [(ROLLWISE_STATEFULSET, "default", "web")]


def test_a_controllers_own_status_write_wakes_nothing_but_a_users_write_does() -> None:
    store = MemoryCluster(clock=lambda: 0.0)
    sts = store.create(_set("apps/v1", "web"))
    sts = store.update_status({**sts, "status": {"replicas": 1}}, actor="statefulset-controller")
    assert sets_to_wake(ClusterSets(store), _last(store)) == []
    store.update_status({**sts, "status": {"replicas": 2}}, actor="user")
    assert sets_to_wake(ClusterSets(store), _last(store)) == [(STATEFULSET, "default", "web")]


def test_a_member_lease_wakes_the_set_it_names() -> None:
    store = MemoryCluster(clock=lambda: 0.0)
    store.create(_set("apps.rollwise.dev/v1alpha1", "etcd"))
    store.create(_set("apps/v1", "other"))
    store.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                  "metadata": {"name": "etcd-0", "labels": {"rollwise.dev/member-of": "etcd"}}})
    assert sets_to_wake(ClusterSets(store), _last(store)) == [(ROLLWISE_STATEFULSET, "default", "etcd")]
    store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    assert sets_to_wake(ClusterSets(store), _last(store)) == []
