"""An informer's promise, as a property: a list at some resourceVersion plus the watch events after it rebuild
exactly what a fresh list shows, under any label and field selector and any sequence of writes — objects that
stop matching leave the cache, objects that start matching enter it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rollwise.api.errors import ApiStatusError
from rollwise.cluster.store.memory import MemoryCluster

NAMES = st.sampled_from(["a", "b", "c"])
APPS = st.sampled_from(["web", "api", None])
OPS = st.one_of(
    st.tuples(st.just("create"), NAMES, APPS),
    st.tuples(st.just("label"), NAMES, APPS),
    st.tuples(st.just("phase"), NAMES, st.sampled_from(["Pending", "Running", "Failed"])),
    st.tuples(st.just("delete"), NAMES, st.sampled_from([0, 30])),
    st.tuples(st.just("finish"), NAMES, st.none()),
)
SELECTORS = st.sampled_from([("", ""), ("app=web", ""), ("app!=web", ""), ("app in (web,api)", "status.phase!=Failed"),
                             ("!app", ""), ("", "status.phase=Running"), ("app", "metadata.name!=b")])


def apply(store: MemoryCluster, op: tuple[str, str, Any]) -> None:
    verb, name, arg = op
    try:
        if verb == "create":
            labels = {"app": arg} if arg else {}
            store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
                          "spec": {"nodeName": "n"}})
        elif verb == "label":
            store.patch("Pod", "default", name, {"metadata": {"labels": {"app": arg}}})
        elif verb == "phase":
            pod = store.get("Pod", "default", name)
            store.update_status({**pod, "status": {"phase": arg}})
        elif verb == "delete":
            store.delete("Pod", "default", name, grace_period_seconds=arg)
        else:
            store.delete("Pod", "default", name, grace_period_seconds=0)
    except ApiStatusError:
        pass


def state(objs: Any) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in objs}


@settings(max_examples=150, deadline=None)
@given(st.lists(OPS, max_size=12), st.lists(OPS, max_size=12), SELECTORS)
def test_list_then_watch_rebuilds_every_later_list(before: list[Any], after: list[Any], selector: Any) -> None:
    labels, fields = selector
    store = MemoryCluster(clock=lambda: 1.0, history_limit=100)
    for op in before:
        apply(store, op)
    cache = state(store.list("Pod", label_selector=labels, field_selector=fields))
    watch = store.watch("Pod", since=store.resource_version, label_selector=labels, field_selector=fields)
    fresh = store.watch("Pod", label_selector=labels, field_selector=fields)  # from the current state
    for op in after:
        apply(store, op)
    for event in watch.drain():
        name = event.object["metadata"]["name"]
        assert event.object["metadata"]["resourceVersion"] == str(event.resource_version)
        if event.type == "DELETED":
            assert name in cache
            del cache[name]
        else:
            assert (name in cache) == (event.type == "MODIFIED")
            cache[name] = event.object["metadata"]["resourceVersion"]
    expected = state(store.list("Pod", label_selector=labels, field_selector=fields))
    assert cache == expected
    rebuilt: dict[str, str] = {}
    for event in fresh.drain():
        if event.type == "DELETED":
            del rebuilt[event.object["metadata"]["name"]]
        else:
            rebuilt[event.object["metadata"]["name"]] = event.object["metadata"]["resourceVersion"]
    assert rebuilt == expected
