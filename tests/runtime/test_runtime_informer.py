"""The informer: list, watch, indexes, and the 410 relist that leaves no ghost objects."""

from __future__ import annotations

import asyncio
import logging
import random

import pytest
from runtime_fakes import FakeSource, names, run

from rollwise.api.errors import CredentialsUnavailable, Forbidden
from rollwise.runtime.cache import CacheReader, Delta, Store
from rollwise.runtime.clock import VirtualClock
from rollwise.runtime.informer import Informer, ListResult


def _start(source: FakeSource, clock: VirtualClock) -> tuple[Informer, list[str], asyncio.Task[None]]:
    informer = Informer(source, clock, rng=random.Random(1))
    seen: list[str] = []

    def handler(delta: Delta) -> None:
        obj = delta.new if delta.new is not None else delta.old
        assert obj is not None
        seen.append(f"{delta.type} {obj['metadata']['name']}")

    informer.add_handler(handler)
    return informer, seen, asyncio.create_task(informer.run())


def test_lists_then_watches_from_the_list_resource_version() -> None:
    async def go() -> None:
        clock, source = VirtualClock(), FakeSource()
        await source.put("a")
        await source.put("b")
        informer, seen, task = _start(source, clock)
        await clock.settle()
        assert informer.has_synced()
        assert source.lists == ["0"] and source.watches == ["2"]
        await source.put("a", labels={"x": "1"})
        await source.remove("b")
        await clock.settle()
        assert seen == ["ADDED a", "ADDED b", "MODIFIED a", "DELETED b"]
        assert names(informer.store.list()) == ["default/a"]
        assert informer.store.latest_rv == "4"
        task.cancel()
    run(go())


def test_indexes_follow_namespace_owner_and_label_changes() -> None:
    async def go() -> None:
        clock, source = VirtualClock(), FakeSource()
        await source.put("p0", owner_uid="set-1", labels={"app": "web"})
        await source.put("p1", namespace="other", labels={"app": "web"})
        informer, _, task = _start(source, clock)
        await clock.settle()
        store = informer.store
        assert names(store.controlled_by("set-1")) == ["default/p0"]
        assert store.uncontrolled("default") == [] and names(store.uncontrolled("other")) == ["other/p1"]
        assert names(store.with_label("app", "web")) == ["default/p0", "other/p1"]
        assert names(store.list("other")) == ["other/p1"]
        await source.put("p0", labels={"app": "db"})  # released by its owner, relabelled
        await clock.settle()
        assert store.controlled_by("set-1") == []
        assert names(store.uncontrolled("default")) == ["default/p0"]  # now an orphan a set may adopt
        assert names(store.with_label("app", "web")) == ["other/p1"]
        assert names(store.with_label("app", "db")) == ["default/p0"]
        reader = CacheReader({"Pod": store})
        assert names(reader.uncontrolled("Pod", "default")) == ["default/p0"]
        assert reader.controlled_by("Lease", "x") == []
        assert names(reader.list("Pod", "default", selector={"matchLabels": {"app": "db"}})) == ["default/p0"]
        assert reader.list("Lease", "default") == []
        task.cancel()
    run(go())


def test_relist_after_410_emits_deletes_for_objects_gone_during_the_gap() -> None:
    async def go() -> None:
        clock, source = VirtualClock(), FakeSource()
        for name in ("a", "b", "c"):
            await source.put(name)
        informer, seen, task = _start(source, clock)
        await clock.settle()
        # While the watch is down: b is deleted, d is created, and the server compacts its history.
        await source.close_watches()
        await source.remove("b")
        await source.put("d")
        source.compact()
        await clock.settle()
        assert source.lists == ["0", ""]  # the relist after expiry is a consistent read
        assert names(informer.store.list()) == ["default/a", "default/c", "default/d"]
        assert seen[-2:] == ["DELETED b", "ADDED d"]
        assert informer.store.latest_rv == "5"
        await source.put("e")  # and it watches on from the relist
        await clock.settle()
        assert informer.store.get("default", "e") is not None
        task.cancel()
    run(go())


def test_a_failed_list_is_retried_after_a_jittered_backoff() -> None:
    async def go() -> None:
        clock, source = VirtualClock(), FakeSource()
        source.fail_next = 2
        informer, _, task = _start(source, clock)
        await clock.settle()
        assert not informer.has_synced()
        await clock.run_until(0.79)
        assert len(source.lists) == 1
        await clock.run_until(5.0)  # 0.8-1.6 s, then 1.6-3.2 s
        assert len(source.lists) == 3 and informer.has_synced()
        task.cancel()
    run(go())


def test_a_clean_close_rewatches_from_the_last_resource_version() -> None:
    async def go() -> None:
        clock, source = VirtualClock(), FakeSource()
        await source.put("a")
        _, _, task = _start(source, clock)
        await clock.settle()
        await source.put("b")
        await clock.settle()
        await source.close_watches()
        await clock.settle()
        assert source.watches == ["1", "2"] and source.lists == ["0"]
        task.cancel()
    run(go())


def test_a_bookmark_moves_the_latest_seen_version_without_changing_objects() -> None:
    store = Store("Pod")
    store.replace([{"metadata": {"name": "a", "namespace": "default", "resourceVersion": "3"}}], "5")
    assert store.apply("BOOKMARK", {"metadata": {"resourceVersion": "9"}}) is None
    assert store.latest_rv == "9" and [o["metadata"]["name"] for o in store.list()] == ["a"]
    assert store.apply("DELETED", {"metadata": {"name": "zz", "namespace": "default", "resourceVersion": "10"}}) \
        is None  # a delete for something never seen changes nothing but the version
    assert store.latest_rv == "10"


def test_the_memory_source_resumes_after_a_version_and_is_gone_past_a_compaction() -> None:
    import pytest

    from rollwise.api.errors import Gone
    from rollwise.cluster.store.memory import MemoryCluster
    from rollwise.operator.memory import Feed, MemoryListWatch

    cluster = MemoryCluster(clock=lambda: 0.0)
    for i in range(5):
        cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}})
    source = MemoryListWatch(Feed(cluster), "ConfigMap", None)
    assert source._cursor_after(0) == 0 and source._cursor_after(3) == 3 and source._cursor_after(5) == 5
    listed = run(source.list(resource_version="0"))
    assert listed.resource_version == "5" and len(listed.items) == 5
    cluster.compact(3)
    assert source._cursor_after(4) == 4
    with pytest.raises(Gone):
        source._cursor_after(2)


def _pod(rv: str, *, app: str = "web", ready: str = "False", owner: str = "set-1") -> dict[str, object]:
    """A pod as decoded from the wire: every event a fresh object, nothing shared with the one before."""
    return {"metadata": {"name": "p0", "namespace": "default", "resourceVersion": rv, "labels": {"app": app},
                         "ownerReferences": [{"uid": owner, "controller": True}]},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}}


def test_an_update_keeps_the_cached_objects_unchanged_parts_and_leaves_the_event_object_alone() -> None:
    store = Store("Pod")
    store.apply("ADDED", _pod("1"))
    first = store.get("default", "p0")
    assert first is not None
    event = _pod("2", ready="True")
    delta = store.apply("MODIFIED", event)
    assert delta is not None and delta.new is store.get("default", "p0")
    new = delta.new
    assert new == event and event["spec"] is not first["spec"]  # the event's object is not changed
    assert new["spec"] is first["spec"] and new["metadata"]["labels"] is first["metadata"]["labels"]
    assert new["metadata"]["ownerReferences"] is first["metadata"]["ownerReferences"]
    assert new["status"] is not first["status"] and new["status"]["conditions"][0]["status"] == "True"
    assert new["metadata"]["resourceVersion"] == "2"
    assert names(store.controlled_by("set-1")) == ["default/p0"]
    assert names(store.with_label("app", "web")) == ["default/p0"]
    store.apply("MODIFIED", _pod("3", app="db", owner="set-2"))  # a relabel and a new owner still re-index
    assert store.with_label("app", "web") == [] and names(store.with_label("app", "db")) == ["default/p0"]
    assert store.controlled_by("set-1") == [] and names(store.controlled_by("set-2")) == ["default/p0"]
    relisted = store.replace([_pod("4", app="db", owner="set-2")], "4")
    assert [d.type for d in relisted] == ["MODIFIED"]
    assert relisted[0].new is not None and relisted[0].new["spec"] is first["spec"]


class _Refusing(FakeSource):
    """Refuses each list with the next of ``answers``, then serves."""

    def __init__(self, answers: list[Exception]) -> None:
        super().__init__()
        self.answers = answers

    async def list(self, *, resource_version: str) -> ListResult:
        if self.answers:
            raise self.answers.pop(0)
        return await super().list(resource_version=resource_version)


def test_a_refused_list_names_the_permission_for_a_403_and_the_credentials_for_a_401(
        caplog: pytest.LogCaptureFixture) -> None:
    async def go() -> None:
        clock = VirtualClock()
        source = _Refusing([Forbidden('pods is forbidden: User "op" cannot list resource "pods"'),
                            CredentialsUnavailable("getting credentials: Exec login returned 1: expired")])
        informer, _, task = _start(source, clock)
        await clock.run_until(30.0)
        assert informer.has_synced()
        task.cancel()

    with caplog.at_level(logging.WARNING, logger="rollwise.runtime.informer"):
        run(go())
    forbidden, unauthenticated = (r.getMessage() for r in caplog.records)
    assert "missing permission: list and watch on Pod" in forbidden
    assert "expired" in unauthenticated and "missing credentials" in unauthenticated
    assert "permission" not in unauthenticated
