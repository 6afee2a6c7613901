"""List bodies and watch streams on the wire: what a client reads must not depend on how the server writes it
(a list streamed a slice at a time, watch events written by the fan-out or by the stream's own task)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from server_support import AUTH, api, body, next_event, pod, run

from rollwise.apiserver.serving import watching
from rollwise.apiserver.serving.http import ListBody

PODS = "/api/v1/namespaces/default/pods"


@pytest.mark.parametrize("chunk", [1, 700, ListBody.CHUNK])
def test_a_list_streamed_in_slices_is_one_json_document_with_its_content_length(
        chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ListBody, "CHUNK", chunk)  # 1: one item per write; 700: a few items per write

    async def t() -> None:
        async with api() as (c, _):
            for i in range(7):
                await c.post(PODS, json=pod(f"p{i}", app="x"), headers=AUTH)
            resp = await c.get(PODS, headers=AUTH)
            raw = await resp.read()
            assert resp.headers["Content-Type"] == "application/json"
            assert int(resp.headers["Content-Length"]) == len(raw)
            assert "Transfer-Encoding" not in resp.headers
            listing = json.loads(raw)
            assert (listing["kind"], listing["apiVersion"]) == ("PodList", "v1")
            assert [p["metadata"]["name"] for p in listing["items"]] == [f"p{i}" for i in range(7)]
            assert raw.endswith(b"]}\n")
            one = await body(await c.get(f"{PODS}?labelSelector=app%3Dx&fieldSelector=metadata.name%3Dp3",
                                         headers=AUTH))
            assert [p["metadata"]["name"] for p in one["items"]] == ["p3"]
            empty = await c.get(f"{PODS}?labelSelector=app%3Dnone", headers=AUTH)
            raw = await empty.read()
            assert int(empty.headers["Content-Length"]) == len(raw)
            assert json.loads(raw)["items"] == []
    run(t)


def test_a_list_shows_each_object_at_its_latest_version() -> None:
    """The cached encodings are found by object: a list after a patch and a delete sends the new version only."""
    async def t() -> None:
        async with api() as (c, _):
            for name in ("a", "b", "c"):
                await c.post(PODS, json=pod(name), headers=AUTH)
            await body(await c.get(PODS, headers=AUTH))  # every item's encoding cached
            await c.patch(f"{PODS}/b", data=json.dumps({"metadata": {"labels": {"v": "2"}}}),
                          headers={**AUTH, "Content-Type": "application/merge-patch+json"})
            await c.delete(f"{PODS}/c", json={"gracePeriodSeconds": 0}, headers=AUTH)
            items = {p["metadata"]["name"]: p for p in (await body(await c.get(PODS, headers=AUTH)))["items"]}
            assert sorted(items) == ["a", "b"]
            assert items["b"]["metadata"]["labels"] == {"v": "2"}
    run(t)


def test_many_watchers_each_get_every_event_once_in_order() -> None:
    async def t() -> None:
        async with api() as (c, _):
            first = await body(await c.post(PODS, json=pod("a"), headers=AUTH))
            rv = first["metadata"]["resourceVersion"]
            streams: list[Any] = [await c.get(f"{PODS}?watch=true&resourceVersion={rv}", headers=AUTH)
                                  for _ in range(5)]
            for i in range(4):
                await c.patch(f"{PODS}/a", data=json.dumps({"metadata": {"labels": {"n": str(i)}}}),
                              headers={**AUTH, "Content-Type": "application/merge-patch+json"})
            await c.post(PODS, json=pod("b"), headers=AUTH)
            for resp in streams:
                assert resp.headers["Transfer-Encoding"] == "chunked"
                seen = [await next_event(resp) for _ in range(5)]
                assert [(e["type"], e["object"]["metadata"]["labels"].get("n")) for e in seen] == [
                    ("MODIFIED", "0"), ("MODIFIED", "1"), ("MODIFIED", "2"), ("MODIFIED", "3"), ("ADDED", None)]
                rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in seen]
                assert rvs == sorted(rvs) and rvs[0] > int(rv)
                resp.close()
    run(t)


def test_a_stream_whose_connection_cannot_take_more_hands_its_events_to_its_task(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watching, "_DIRECT_LIMIT", -1)  # every transport counts as full: the task always writes

    async def t() -> None:
        async with api() as (c, _):
            first = await body(await c.post(PODS, json=pod("a"), headers=AUTH))
            async with c.get(f"{PODS}?watch=true&resourceVersion={first['metadata']['resourceVersion']}",
                             headers=AUTH) as resp:
                for name in ("b", "c"):
                    await c.post(PODS, json=pod(name), headers=AUTH)
                    ev = await next_event(resp)
                    assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", name)
    run(t)


def test_a_bookmark_follows_the_events_before_it_and_a_dropped_watch_ends_its_stream() -> None:
    async def t() -> None:
        async with api(bookmark_seconds=0.05) as (c, _):
            first = await body(await c.post(PODS, json=pod("a"), headers=AUTH))
            async with c.get(f"{PODS}?watch=true&allowWatchBookmarks=true&resourceVersion="
                             f"{first['metadata']['resourceVersion']}", headers=AUTH) as resp:
                await c.post(PODS, json=pod("b"), headers=AUTH)
                seen = [await next_event(resp) for _ in range(3)]
                assert seen[0]["type"] == "ADDED"
                last = int(seen[0]["object"]["metadata"]["resourceVersion"])
                for ev in seen[1:]:
                    assert ev["type"] == "BOOKMARK"
                    assert int(ev["object"]["metadata"]["resourceVersion"]) >= last
                assert (await c.post("/debug/rollwise/drop-watches", headers=AUTH)).status == 200
                while (line := await resp.content.readline()):
                    assert json.loads(line)["type"] == "BOOKMARK"  # any already on the way; then the end
    run(t)


def test_timeout_seconds_ends_a_quiet_stream() -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            async with c.get(f"{PODS}?watch=true&timeoutSeconds=1", headers=AUTH) as resp:
                assert (await next_event(resp))["type"] == "ADDED"
                assert await resp.content.read() == b""  # the stream ended, cleanly
    run(t)


def test_a_stream_whose_event_cannot_be_sent_ends_and_the_others_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rather than a stream that silently lost an event: its client sees the end and watches again."""
    real = watching._LINES.get
    failed: list[bool] = []

    def get_once_failing(resource: Any, event_type: str, obj: Any) -> bytes:
        if not failed:
            failed.append(True)
            raise RuntimeError("cannot encode")
        return real(resource, event_type, obj)

    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            url = f"{PODS}?watch=true&resourceVersion=0"
            async with c.get(url, headers=AUTH) as one, c.get(url, headers=AUTH) as two:
                for resp in (one, two):  # each stream wrote its first event and waits: the fan-out writes the next
                    assert (await next_event(resp))["object"]["metadata"]["name"] == "a"
                monkeypatch.setattr(watching._LINES, "get", get_once_failing)
                await c.post(PODS, json=pod("b"), headers=AUTH)
                lines = await asyncio.gather(_line_or_end(one), _line_or_end(two))
                assert sorted(lines, key=len)[0] == b""  # one stream ended
                assert json.loads(sorted(lines, key=len)[1])["object"]["metadata"]["name"] == "b"
    run(t)


async def _line_or_end(resp: Any) -> bytes:
    try:
        return await resp.content.readline()  # type: ignore[no-any-return]
    except aiohttp.ClientPayloadError:  # ended without its last chunk (the failure hit the stream's own task)
        return b""
