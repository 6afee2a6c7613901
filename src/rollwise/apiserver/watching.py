"""Watch streams: chunked NDJSON over the store's per-resource watches (``MemoryCluster.watch``).

A watch from a resourceVersion replays the history after it, or gets one ERROR event carrying the 410 ``Expired``
Status when the history no longer reaches back that far (then the stream ends, as upstream's does). Events are
wrapped in one-row Tables when the client asked for Tables (``kubectl get -w``); column definitions go in the
first. ``timeoutSeconds`` ends the stream; ``allowWatchBookmarks`` sends a BOOKMARK after each quiet
``bookmark_seconds``; a watch the store closes (dropped, or its consumer fell too far behind) ends the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import msgspec
from aiohttp import web

from rollwise.api.errors import Gone
from rollwise.api.meta import Obj
from rollwise.apiserver.config import ServerConfig
from rollwise.apiserver.event_shapes import selector_to_stored
from rollwise.apiserver.http import bool_flag, dumps, query_int, table, wants_table, wire_bytes
from rollwise.apiserver.resources import Resource
from rollwise.apiserver.status import error_status
from rollwise.apiserver.store import ApiStore
from rollwise.cluster.watch import WatchEvent

__all__ = ["stream_watch"]


async def stream_watch(request: web.Request, store: ApiStore, cfg: ServerConfig, resource: Resource,
                       namespace: str | None) -> web.StreamResponse:
    timeout = query_int(request.query, "timeoutSeconds")
    bookmarks = bool_flag(request.query.get("allowWatchBookmarks"))
    version = wants_table(request.headers.get("Accept", ""))
    include = request.query.get("includeObject", "Metadata")
    ns = namespace if resource.namespaced else None
    store.feed.pump()
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    resp.enable_chunked_encoding()
    try:
        watch = store.cluster.watch(resource.key, ns, since=request.query.get("resourceVersion"),
                                         label_selector=request.query.get("labelSelector"),
                                         field_selector=selector_to_stored(request.query.get("fieldSelector"))
                                         if resource.stored_as is not None else request.query.get("fieldSelector"))
    except Gone as err:
        await resp.prepare(request)
        await resp.write(_line({"type": "ERROR", "object": error_status(err)}))
        await resp.write_eof()
        return resp
    wake = asyncio.Event()
    watch.notify = wake.set
    await resp.prepare(request)
    first = True

    def encode_event(ev: WatchEvent) -> bytes:
        nonlocal first
        if ev.type == "BOOKMARK":
            return _line({"type": "BOOKMARK", "object": ev.object})
        if version:
            payload: Any = table(resource, [ev.object], now=store.clock(), version=version, rv=None,
                                 include=include, headers=first)
            first = False
        else:
            return _LINES.get(resource, ev.type, ev.object)
        return _line({"type": ev.type, "object": payload})

    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            wake.clear()  # before draining: a write from now on wakes the wait below
            events = watch.drain()
            if cfg.faults.watch_delay_seconds:
                for ev in events:
                    await asyncio.sleep(cfg.faults.watch_delay_seconds)
                    await resp.write(encode_event(ev))
            elif events:  # what queued while this stream waited goes out in one write (one TLS record, one send)
                await resp.write(b"".join([encode_event(ev) for ev in events]))
            if watch.closed:
                break
            wait = cfg.bookmark_seconds if bookmarks else None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                wait = left if wait is None else min(wait, left)
            try:
                await asyncio.wait_for(wake.wait(), wait)
            except TimeoutError:
                if bookmarks and (deadline is None or time.monotonic() < deadline):
                    await resp.write(encode_event(watch.bookmark()))
        with contextlib.suppress(ConnectionError):
            await resp.write_eof()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        watch.close()
    return resp


class _EventLines:
    """Each event's line, made once and shared by every watcher that sends it (the watchers of a resource take the
    same change one after another). An entry holds its object, so the ``id`` in its key is not reused meanwhile."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._lines: dict[tuple[str, str, str, int], tuple[Obj, bytes]] = {}

    def get(self, resource: Resource, event_type: str, obj: Obj) -> bytes:
        key = (resource.api_version, resource.kind, event_type, id(obj))
        hit = self._lines.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        line = _line({"type": event_type, "object": msgspec.Raw(wire_bytes(resource, obj))})
        if len(self._lines) >= self.size:
            del self._lines[next(iter(self._lines))]
        self._lines[key] = (obj, line)
        return line


_LINES = _EventLines()


def _line(event: dict[str, Any]) -> bytes:
    return dumps(event) + b"\n"
