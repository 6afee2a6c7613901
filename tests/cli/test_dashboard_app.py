"""The dashboard's web application over a board filled by hand: read-only, local, and showing what the view says."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from builders import make_pod, make_set, revision_for, with_image

from rollwise.api.meta import Obj
from rollwise.cli.dashboard.app import make_app
from rollwise.cli.dashboard.board import Board
from rollwise.cli.follow import Follower
from rollwise.cluster.resources import CONTROLLER_REVISION, EVENT_V1, LEASE, POD, ROLLWISE_STATEFULSET, STATEFULSET

NOW = 100.0


def _world() -> dict[Any, dict[tuple[str, str], Obj]]:
    old_set = make_set("web", image="nginx:1.26")
    old = revision_for(old_set, 1)
    sts = with_image(old_set, "nginx:typo")
    new = revision_for(sts, 2)
    broken = make_pod(sts, 2, revision=new)
    broken["status"] = {"phase": "Pending", "containerStatuses": [
        {"name": "nginx", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}
    pods = [make_pod(sts, 0, revision=old), make_pod(sts, 1, revision=old), broken]
    sts["status"] = {"observedGeneration": 2, "replicas": 3, "currentRevision": old["metadata"]["name"],
                     "updateRevision": new["metadata"]["name"], "updatedReplicas": 1, "readyReplicas": 2,
                     "availableReplicas": 2, "conditions": [
                         {"type": "Progressing", "status": "True", "reason": "RolloutInProgress",
                          "message": "waiting for web-2 to become available: container nginx is ImagePullBackOff"}]}
    key = ("default",)
    return {STATEFULSET: {(*key, "web"): sts}, ROLLWISE_STATEFULSET: {},
            POD: {(*key, p["metadata"]["name"]): p for p in pods},
            CONTROLLER_REVISION: {(*key, r["metadata"]["name"]): r for r in (old, new)}, LEASE: {},
            EVENT_V1: {(*key, "web-2.1"): _PULL_FAILED}}


_PULL_FAILED = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": "web-2.1", "namespace": "default"}, "regarding": {"kind": "Pod", "name": "web-2"},
                "type": "Warning", "reason": "Failed",
                "note": 'Failed to pull image "nginx:typo"', "eventTime": 90.0}


@asynccontextmanager
async def _dashboard() -> AsyncIterator[tuple[TestClient[Any, Any], Board]]:
    follower = Follower(None, None, [STATEFULSET, ROLLWISE_STATEFULSET])  # type: ignore[arg-type]
    follower.objects = _world()
    board = Board(follower, clock=lambda: NOW)
    board.refresh()
    async with TestClient(TestServer(make_app(board), host="127.0.0.1", port=0)) as client:
        yield client, board


def _run(coro: Any) -> None:
    asyncio.run(coro)


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
def test_every_method_but_get_is_refused(method: str) -> None:
    async def go() -> None:
        async with _dashboard() as (client, _):
            for path in ("/", "/sets/default/web", "/api/sets", "/static/dashboard.js"):
                resp = await client.request(method, path)
                assert resp.status == 405, path
                assert resp.headers["Allow"] == "GET"

    _run(go())


def test_a_foreign_host_name_is_refused() -> None:
    async def go() -> None:
        async with _dashboard() as (client, _):
            resp = await client.get("/", headers={"Host": "attacker.example:3100"})
            assert resp.status == 403
            assert (await client.get("/", headers={"Host": "localhost:3100"})).status == 200

    _run(go())


def test_the_list_shows_every_set_with_its_state() -> None:
    async def go() -> None:
        async with _dashboard() as (client, _):
            html = await (await client.get("/")).text()
            assert '<a href="/sets/default/web?kind=sts">web</a>' in html
            assert "waiting for web-2 to become available: container nginx is ImagePullBackOff" in html
            rows = await (await client.get("/api/sets")).json()
            assert [(r["kind"], r["name"], r["state"]) for r in rows] == [("sts", "web", "Progressing")]

    _run(go())


def test_the_set_page_shows_the_pods_and_the_reason_it_waits() -> None:
    async def go() -> None:
        async with _dashboard() as (client, _):
            resp = await client.get("/sets/default/web")
            assert resp.status == 200
            assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
            html = await resp.text()
            for pod in ("web-0", "web-1", "web-2"):
                assert f'data-pod="{pod}"' in html
            assert "rollout waits here: container nginx is ImagePullBackOff" in html
            assert (await client.get("/sets/default/nope")).status == 404
            assert (await client.get("/sets/default/web?kind=rsts")).status == 404

    _run(go())


def test_the_stream_sends_the_view_and_then_each_change() -> None:
    async def go() -> None:
        async with _dashboard() as (client, board):
            resp = await client.get("/sets/default/web/stream")
            assert resp.headers["Content-Type"] == "text/event-stream"
            first = json.loads((await resp.content.readline()).decode().removeprefix("data: "))
            assert first["view"]["waiting_on"] == "web-2"
            assert {s["pod"] for s in first["timeline"]["segments"]} == {"web-0", "web-1", "web-2"}
            await resp.content.readline()  # the blank line that ends an event
            board.follower.objects[POD].pop(("default", "web-2"))
            board.refresh()
            second = json.loads((await resp.content.readline()).decode().removeprefix("data: "))
            assert second["view"]["pods"][2]["status"] == "Missing"
            resp.close()

    _run(go())


def test_chart_js_is_served_from_the_package() -> None:
    async def go() -> None:
        async with _dashboard() as (client, _):
            resp = await client.get("/static/chart.umd.min.js")
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/javascript")
            assert (await resp.text()).startswith("/*!\n * Chart.js v4.6.1")
            assert (await client.get("/static/..%2Fapp.py")).status == 404

    _run(go())


def test_the_set_pages_events_say_when_they_happened() -> None:
    async def go() -> None:
        async with _dashboard() as (client, board):
            html = await (await client.get("/sets/default/web")).text()
            assert '<time>1970-01-01T00:01:30Z</time> <strong>Failed</strong> Pod/web-2: Failed to pull image' in html
            [event] = board.detail(("sts", "default", "web"))["view"]["events"]  # type: ignore[index]
            assert event["at"] == 90.0, "the stream carries the time dashboard.js writes the same way"

    _run(go())
