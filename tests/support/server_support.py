"""An in-process API server for protocol tests (aiohttp's TestServer on 127.0.0.1, a free port, always closed)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer

from rollwise.apiserver.app import make_app
from rollwise.apiserver.serving.config import ServerConfig
from rollwise.apiserver.storage.store import ApiStore

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DEADLINE = 10.0


@asynccontextmanager
async def api(**config: Any) -> AsyncIterator[tuple[TestClient[Any, Any], ApiStore]]:
    store = ApiStore(history=config.pop("history", 10_000))
    app = make_app(store, ServerConfig(tokens={TOKEN: "admin"}, debug_endpoints=True, **config))
    async with TestClient(TestServer(app, host="127.0.0.1", port=0)) as client:
        yield client, store


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(test())


async def body(resp: ClientResponse) -> Any:
    return json.loads(await resp.read())


async def next_event(resp: ClientResponse) -> dict[str, Any]:
    line = await asyncio.wait_for(resp.content.readline(), DEADLINE)
    assert line, "the watch stream ended"
    return json.loads(line)  # type: ignore[no-any-return]


def pod(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}


def sts(name: str, image: str = "nginx:1.27", replicas: int = 2) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": image}]}}}}
