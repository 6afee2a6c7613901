"""A store kept in SQLite: reopened, it has the same objects, resourceVersions and uids, and counts on."""

from __future__ import annotations

from pathlib import Path

import pytest

from rollwise.api.errors import Gone
from rollwise.cluster.resources import ROLLWISE_STATEFULSET
from rollwise.cluster.store.memory import MemoryCluster


def test_a_reopened_store_has_the_same_objects_versions_and_uids(tmp_path: Path) -> None:
    store = MemoryCluster.open(tmp_path, clock=lambda: 5.0)
    store.create({"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "metadata": {"name": "web"},
                  "spec": {"replicas": 1}})
    owner = store.get(ROLLWISE_STATEFULSET, "default", "web")
    store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "ownerReferences": [
        {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "name": "web",
         "uid": owner["metadata"]["uid"], "controller": True}]}, "spec": {}})
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    store.patch("Pod", "default", "web-0", {"metadata": {"labels": {"a": "b"}}})
    store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gone"}})
    store.delete("ConfigMap", "default", "gone")
    before = sorted(store.objects(), key=lambda o: o["metadata"]["uid"])
    rv = store.resource_version
    store.close()

    again = MemoryCluster.open(tmp_path, clock=lambda: 9.0)
    assert sorted(again.objects(), key=lambda o: o["metadata"]["uid"]) == before
    assert again.resource_version == rv == 6
    assert len(again) == 3
    assert len(before[0]["metadata"]["uid"]) == 36  # uuid4 when persistent
    with pytest.raises(Gone):
        again.watch("Pod", since="2")  # the history is not kept: a client re-lists
    created = again.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "next"}})
    assert created["metadata"]["resourceVersion"] == "7"
    # the collector's index came back too: deleting the owner takes its pod with it
    again.delete(ROLLWISE_STATEFULSET, "default", "web")
    assert again.list("Pod") == [] or again.get("Pod", "default", "web-0")["metadata"].get("deletionTimestamp")
    again.close()
    third = MemoryCluster.open(tmp_path, clock=lambda: 9.0)
    assert third.list(ROLLWISE_STATEFULSET) == []
    assert [o["metadata"]["name"] for o in third.list("ConfigMap")] == ["next"]
    third.close()


def test_a_write_the_disk_refuses_is_not_made_in_memory_either(tmp_path: Path) -> None:
    from rollwise.api.errors import InternalError

    store = MemoryCluster.open(tmp_path, clock=lambda: 5.0)
    kept = store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}})
    store._backing.close()  # type: ignore[union-attr]  # the disk goes away under the store
    with pytest.raises(InternalError):
        store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "lost"}})
    with pytest.raises(InternalError):
        store.delete("ConfigMap", "default", "kept")
    assert store.list("ConfigMap") == [kept]
    assert store.resource_version == 1
