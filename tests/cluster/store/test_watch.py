"""Per-resource watches: replay from a resourceVersion, Gone past the history, selectors with DELETED on un-match,
bookmarks, and watches closed by the store."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.api.errors import BadRequest, Gone
from rollwise.api.meta import Obj
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET
from rollwise.cluster.store.memory import MemoryCluster


def pod(name: str, *, namespace: str = "default", **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {}}


def seen(events: Any) -> list[tuple[str, str, str]]:
    return [(e.type, e.object["metadata"]["name"], e.object["metadata"]["resourceVersion"]) for e in events]


@pytest.fixture
def store() -> MemoryCluster:
    return MemoryCluster(clock=lambda: 1.0, history_limit=5)


def test_a_watch_without_a_version_starts_with_the_current_objects_then_follows_writes(store: MemoryCluster) -> None:
    store.create(pod("a"))
    store.create(pod("b", namespace="other"))
    w = store.watch("Pod", "default")
    assert seen(w.drain()) == [("ADDED", "a", "1")]
    store.patch("Pod", "default", "a", {"metadata": {"labels": {"x": "1"}}})
    store.create(pod("b", namespace="other2"))
    store.delete("Pod", "default", "a", grace_period_seconds=0)
    assert seen(w.drain()) == [("MODIFIED", "a", "3"), ("DELETED", "a", "5")]


def test_a_watch_from_a_version_replays_only_later_changes_of_that_resource(store: MemoryCluster) -> None:
    store.create(pod("a"))
    rv = store.resource_version
    store.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}})
    store.create(pod("b"))
    assert seen(store.watch("Pod", since=str(rv)).drain()) == [("ADDED", "b", "3")]
    assert store.watch("Pod", since=store.resource_version).drain() == []


def test_a_version_older_than_the_bounded_history_is_gone(store: MemoryCluster) -> None:
    for i in range(7):
        store.create(pod(f"p{i}"))  # history of 5: changes 1 and 2 are compacted away
    with pytest.raises(Gone):
        store.watch("Pod", since="1")
    assert [e.object["metadata"]["name"] for e in store.watch("Pod", since="2").drain()] == [
        "p2", "p3", "p4", "p5", "p6"]


def test_a_store_without_history_serves_watches_from_now_only() -> None:
    store = MemoryCluster(clock=lambda: 1.0, history_limit=0)
    store.create(pod("a"))
    w = store.watch("Pod", "default")
    store.create(pod("b"))
    assert seen(w.drain()) == [("ADDED", "a", "1"), ("ADDED", "b", "2")]
    with pytest.raises(Gone):
        store.watch("Pod", since="1")
    later = store.watch("Pod", since=store.resource_version)
    store.create(pod("c"))
    assert seen(later.drain()) == [("ADDED", "c", "3")]


def test_compacting_the_history_makes_every_older_watch_gone(store: MemoryCluster) -> None:
    store.create(pod("a"))
    store.create(pod("b"))
    store.compact_history()
    with pytest.raises(Gone) as err:
        store.watch("Pod", since="1")
    assert err.value.code == 410
    assert store.watch("Pod", since="2").drain() == []


def test_a_selector_watch_sees_deleted_when_an_object_stops_matching_and_added_when_it_starts(
    store: MemoryCluster,
) -> None:
    store.create(pod("a", app="web"))
    w = store.watch("Pod", label_selector="app=web")
    assert seen(w.drain()) == [("ADDED", "a", "1")]
    store.patch("Pod", "default", "a", {"metadata": {"labels": {"app": "api"}}})
    gone = w.drain()
    assert seen(gone) == [("DELETED", "a", "2")]
    assert gone[0].object["metadata"]["labels"] == {"app": "web"}  # the last matching state, at the new version
    store.patch("Pod", "default", "a", {"metadata": {"labels": {"app": "web"}}})
    store.create(pod("b", app="api"))
    assert seen(w.drain()) == [("ADDED", "a", "3")]


def test_field_selectors_apply_to_watches(store: MemoryCluster) -> None:
    created = store.create(pod("a"))
    w = store.watch("Pod", field_selector="status.phase=Running")
    store.update_status({**created, "status": {"phase": "Running"}})
    store.update_status({**store.get("Pod", "default", "a"), "status": {"phase": "Failed"}})
    assert [e.type for e in w.drain()] == ["ADDED", "DELETED"]
    with pytest.raises(BadRequest):
        store.watch("Pod", field_selector="spec.replicas=1")
    with pytest.raises(BadRequest):
        store.watch("Pod", since="abc")


def test_watches_are_per_resource_even_for_one_kind(store: MemoryCluster) -> None:
    w = store.watch(ROLLWISE_STATEFULSET)
    store.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"}, "spec": {}})
    assert w.drain() == []
    store.create({"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "metadata": {"name": "web"},
                  "spec": {}})
    assert seen(w.drain()) == [("ADDED", "web", "2")]
    assert store.watch(STATEFULSET, since="0").drain()[0].object["apiVersion"] == "apps/v1"


def test_bookmarks_carry_the_current_version_and_notify_wakes_the_consumer(store: MemoryCluster) -> None:
    w = store.watch("Pod")
    woken: list[int] = []
    w.notify = lambda: woken.append(1)
    store.create(pod("a"))
    store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    assert woken == [1]
    mark = w.bookmark()
    assert (mark.type, mark.object["kind"], mark.object["metadata"]["resourceVersion"]) == ("BOOKMARK", "Pod", "2")


def test_dropped_watches_are_closed_and_queue_nothing_more(store: MemoryCluster) -> None:
    w = store.watch("Pod")
    woken: list[int] = []
    w.notify = lambda: woken.append(1)
    assert store.drop_watches() == 1
    assert w.closed and woken == [1]
    store.create(pod("a"))
    assert w.drain() == []


def test_a_consumer_that_falls_too_far_behind_is_closed_with_what_it_had() -> None:
    store = MemoryCluster(clock=lambda: 1.0, watch_buffer=2)
    w = store.watch("Pod")
    for name in "abc":
        store.create(pod(name))
    assert w.closed
    assert seen(w.drain()) == [("ADDED", "a", "1"), ("ADDED", "b", "2")]  # it re-watches from 2
    assert seen(store.watch("Pod", since="2").drain()) == [("ADDED", "c", "3")]
