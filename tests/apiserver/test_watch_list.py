"""Streaming lists (KEP-3157) and the list and watch options around them, as kube-apiserver 1.34+ answers them:
``sendInitialEvents=true`` sends the state as ADDED events and, with bookmarks allowed, one BOOKMARK annotated
``k8s.io/initial-events-end`` before any later change; ``false`` sends no initial state; forbidden combinations are a
422 naming the ``ListOptions`` field; malformed numbers, resourceVersions and continue tokens are 400s; boolean
parameters read as apimachinery reads them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from server_support import AUTH, api, body, next_event, pod, run

PODS = "/api/v1/namespaces/default/pods"
WATCH_LIST = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"


async def _events_until_bookmark(resp: Any) -> list[dict[str, Any]]:
    events = [await next_event(resp)]
    while events[-1]["type"] != "BOOKMARK":
        events.append(await next_event(resp))
    return events


def test_a_watch_list_sends_the_state_then_the_initial_events_end_bookmark_then_changes() -> None:
    async def t() -> None:
        async with api() as (c, store):
            for name in ("a", "b"):
                await c.post(PODS, json=pod(name), headers=AUTH)
            resp = await c.get(f"{PODS}?{WATCH_LIST}", headers=AUTH)
            events = await _events_until_bookmark(resp)
            assert [(e["type"], e["object"]["metadata"].get("name")) for e in events] == [
                ("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", None)]
            mark = events[-1]["object"]
            assert mark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
            assert mark["metadata"]["resourceVersion"] == str(store.resource_version)
            assert (mark["kind"], mark["apiVersion"]) == ("Pod", "v1")
            await c.post(PODS, json=pod("c"), headers=AUTH)
            later = await next_event(resp)
            assert (later["type"], later["object"]["metadata"]["name"]) == ("ADDED", "c")
            resp.close()
    run(t)


def test_a_change_made_as_the_watch_list_opens_comes_after_its_bookmark() -> None:
    """The synthetic events are queued as the watch opens; a write before the first send is newer than the state
    they show, so it follows the bookmark rather than being taken for part of the state."""
    async def t() -> None:
        async with api() as (c, store):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            opened = store.cluster.watch
            writes: list[Any] = []

            def watch_then_write(*args: Any, **kwargs: Any) -> Any:
                w = opened(*args, **kwargs)
                late = pod("late")
                late["metadata"]["namespace"] = "default"
                writes.append(store.cluster.create(late))
                return w

            store.cluster.watch = watch_then_write  # type: ignore[method-assign]
            resp = await c.get(f"{PODS}?{WATCH_LIST}", headers=AUTH)
            events = await _events_until_bookmark(resp)
            assert [e["object"]["metadata"].get("name") for e in events] == ["a", None]
            late = await next_event(resp)
            assert late["object"]["metadata"]["name"] == "late"
            assert int(late["object"]["metadata"]["resourceVersion"]) > int(
                events[-1]["object"]["metadata"]["resourceVersion"])
            resp.close()
    run(t)


def test_a_plain_watch_with_bookmarks_allowed_is_defaulted_to_a_watch_list() -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            for query in ("watch=1&allowWatchBookmarks=true", "watch=true&resourceVersion=0&allowWatchBookmarks=1"):
                resp = await c.get(f"{PODS}?{query}", headers=AUTH)
                events = await _events_until_bookmark(resp)
                assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
                assert events[-1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
                resp.close()
    run(t)


def test_send_initial_events_false_starts_at_the_newest_and_a_resource_version_replays_after_it() -> None:
    async def t() -> None:
        async with api() as (c, _):
            first = await body(await c.post(PODS, json=pod("a"), headers=AUTH))
            await c.post(PODS, json=pod("b"), headers=AUTH)
            resp = await c.get(f"{PODS}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan",
                               headers=AUTH)
            await c.post(PODS, json=pod("c"), headers=AUTH)
            assert (await next_event(resp))["object"]["metadata"]["name"] == "c"  # not a, not b
            resp.close()
            rv = first["metadata"]["resourceVersion"]
            resp = await c.get(f"{PODS}?watch=1&resourceVersion={rv}", headers=AUTH)
            assert [(await next_event(resp))["object"]["metadata"]["name"] for _ in range(2)] == ["b", "c"]
            resp.close()
    run(t)


@pytest.mark.parametrize(("query", "message"), [
    ("watch=1&sendInitialEvents=true",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting '
     "resourceVersionMatch to NotOlderThan"),
    ("watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden '
     "for watch unless sendInitialEvents is provided"),
    ("watch=1&sendInitialEvents=true&resourceVersionMatch=Exact",
     'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting '
     'resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: "Exact": supported values: '
     '"NotOlderThan"]'),
    ("sendInitialEvents=true",
     'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'),
    ("resourceVersionMatch=NotOlderThan",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden '
     "unless resourceVersion is provided"),
    ("resourceVersion=0&resourceVersionMatch=Exact",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is '
     'forbidden for resourceVersion "0"'),
    ("resourceVersion=1&resourceVersionMatch=Bogus",
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: '
     '"Exact", "NotOlderThan", ""'),
])
def test_forbidden_option_combinations_are_422_naming_the_list_options_field(query: str, message: str) -> None:
    async def t() -> None:
        async with api() as (c, _):
            resp = await c.get(f"{PODS}?{query}", headers=AUTH)
            status = await body(resp)
            assert (resp.status, status["reason"], status["message"]) == (422, "Invalid", message)
            assert {cause["field"] for cause in status["details"]["causes"]} <= {"resourceVersionMatch",
                                                                                  "sendInitialEvents"}
    run(t)


@pytest.mark.parametrize(("query", "said"), [
    ("limit=abc", 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("limit=1e3", 'strconv.ParseInt: parsing "1e3": invalid syntax'),
    ("limit=99999999999999999999", "value out of range"),
    ("watch=1&timeoutSeconds=soon", 'parsing "soon": invalid syntax'),
    ("resourceVersion=abc", "invalid resource version"),
    ("continue=garbage", "invalid continue token"),
])
def test_malformed_numbers_resource_versions_and_tokens_are_400(query: str, said: str) -> None:
    async def t() -> None:
        async with api() as (c, _):
            resp = await c.get(f"{PODS}?{query}", headers=AUTH)
            status = await body(resp)
            assert (resp.status, status["kind"], status["reason"]) == (400, "Status", "BadRequest")
            assert said in status["message"]
    run(t)


@pytest.mark.parametrize(("value", "watches"), [
    ("true", True), ("1", True), ("True", True), ("yes", True), ("", True),
    ("false", False), ("0", False), ("FALSE", False)])
def test_boolean_parameters_read_as_apimachinery_reads_them(value: str, watches: bool) -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            resp = await c.get(f"{PODS}?watch={value}&timeoutSeconds=1", headers=AUTH)
            if watches:
                assert (await next_event(resp))["type"] == "ADDED"
                resp.close()
            else:
                assert (await body(resp))["kind"] == "PodList"
    run(t)


def test_a_negative_timeout_ends_the_watch_at_once() -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            resp = await c.get(f"{PODS}?watch=1&timeoutSeconds=-1", headers=AUTH)
            ended = await asyncio.wait_for(resp.read(), 10)  # the stream ends by itself, after what was queued
            assert [line.count(b'"ADDED"') for line in ended.splitlines()] in ([], [1])
    run(t)
