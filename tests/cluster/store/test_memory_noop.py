"""An update whose result equals the stored object writes nothing, on every update verb of the memory store.

kube-apiserver's storage compares the updated object with the stored one (``GuaranteedUpdate`` in
k8s.io/apiserver/pkg/storage/etcd3/store.go) and, when equal, hands back the stored object: the resourceVersion
stays, no watcher hears a MODIFIED event, the generation stays, and no write is counted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rollwise.api.errors import Conflict
from rollwise.api.meta import Obj
from rollwise.api.values import clone
from rollwise.cluster.store.memory import MemoryCluster


def statefulset() -> Obj:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}}}


@pytest.fixture
def store() -> MemoryCluster:
    cluster = MemoryCluster(clock=lambda: 5.0)
    created = cluster.create(statefulset())
    cluster.update_status({**created, "status": {"replicas": 3, "readyReplicas": 3}})
    return cluster


def stored(store: MemoryCluster) -> Obj:
    return store.get("StatefulSet", "default", "web")


SAME: dict[str, Callable[[MemoryCluster], Obj]] = {
    "update": lambda s: s.update(clone(stored(s))),
    "update without a resourceVersion": lambda s: s.update(
        {**clone(stored(s)), "metadata": {k: v for k, v in stored(s)["metadata"].items() if k != "resourceVersion"}}),
    "update_status": lambda s: s.update_status(clone(stored(s))),
    "update_status handed over": lambda s: s.update_status(
        {**stored(s), "status": dict(stored(s)["status"])}, handed_over=True),
    "patch": lambda s: s.patch("StatefulSet", "default", "web", {"spec": {"replicas": 3}}),
    "empty patch": lambda s: s.patch("StatefulSet", "default", "web", {}),
    "status patch": lambda s: s.patch("StatefulSet", "default", "web", {"status": {"readyReplicas": 3}}),
}


@pytest.mark.parametrize("verb", list(SAME))
def test_an_update_that_changes_nothing_keeps_the_version_and_tells_no_watcher(store: MemoryCluster,
                                                                               verb: str) -> None:
    before = stored(store)
    rv, writes = store.resource_version, store.write_count()
    watch = store.watch("StatefulSet", since=rv)
    out = SAME[verb](store)
    assert out is before  # the stored object itself, with its old resourceVersion
    assert stored(store) is before
    assert store.resource_version == rv
    assert out["metadata"]["resourceVersion"] == str(rv)
    assert out["metadata"]["generation"] == 1
    assert watch.drain() == []
    assert store.write_count() == writes


CHANGE: dict[str, Callable[[MemoryCluster], Obj]] = {
    "update": lambda s: s.update({**clone(stored(s)), "spec": {**stored(s)["spec"], "replicas": 4}}),
    "update of a label": lambda s: s.update(
        {**clone(stored(s)), "metadata": {**stored(s)["metadata"], "labels": {"app": "web", "tier": "1"}}}),
    "update_status": lambda s: s.update_status({**clone(stored(s)), "status": {"replicas": 3}}),
    "patch": lambda s: s.patch("StatefulSet", "default", "web", {"spec": {"replicas": 4}}),
}


@pytest.mark.parametrize("verb", list(CHANGE))
def test_an_update_that_changes_something_still_bumps_the_version_and_tells_watchers(store: MemoryCluster,
                                                                                     verb: str) -> None:
    rv = store.resource_version
    watch = store.watch("StatefulSet", since=rv)
    out = CHANGE[verb](store)
    assert store.resource_version == rv + 1
    assert out["metadata"]["resourceVersion"] == str(rv + 1)
    assert [e.type for e in watch.drain()] == ["MODIFIED"]


def test_a_stale_resource_version_is_a_conflict_even_when_the_update_would_change_nothing(
        store: MemoryCluster) -> None:
    stale: dict[str, Any] = clone(stored(store))
    stale["metadata"]["resourceVersion"] = "1"
    with pytest.raises(Conflict):
        store.update(stale)


def test_the_change_feed_records_no_change_for_an_update_that_changes_nothing(store: MemoryCluster) -> None:
    _, cursor = store.changes_since(0)
    store.update(clone(stored(store)))
    assert store.changes_since(cursor) == ([], cursor)
