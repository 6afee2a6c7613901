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
import logging
import time
import weakref
from collections.abc import Callable
from typing import Any

import msgspec
from aiohttp import web

from rollwise.api.errors import Gone
from rollwise.api.meta import Obj
from rollwise.apiserver.kinds.event_shapes import selector_to_stored
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.serving.config import ServerConfig
from rollwise.apiserver.serving.http import dumps, table, wants_table, wire_bytes
from rollwise.apiserver.serving.list_options import INITIAL_EVENTS_END, ListOptions
from rollwise.apiserver.serving.status import error_status
from rollwise.apiserver.storage.store import ApiStore
from rollwise.cluster.store.watch import Watch, WatchEvent

__all__ = ["stream_watch"]

log = logging.getLogger("rollwise.apiserver")


async def stream_watch(request: web.Request, store: ApiStore, cfg: ServerConfig, resource: Resource,
                       namespace: str | None, options: ListOptions) -> web.StreamResponse:
    timeout = options.timeout_seconds
    bookmarks = options.allow_watch_bookmarks
    version = wants_table(request.headers.get("Accept", ""))
    include = request.query.get("includeObject", "Metadata")
    ns = namespace if resource.namespaced else None
    store.feed.pump()
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    resp.enable_chunked_encoding()
    # The BOOKMARK that ends the initial events carries the resourceVersion of the state they show (KEP-3157): the
    # one before the watch opens, as the open queues a synthetic ADDED per object; any event newer follows it.
    initial_end: int | None = store.resource_version if options.initial_events_end_bookmark else None
    try:
        start = options.start
        watch = store.cluster.watch(resource.key, ns, since=str(store.resource_version) if start is None else start,
                                         label_selector=request.query.get("labelSelector"),
                                         field_selector=selector_to_stored(request.query.get("fieldSelector"))
                                         if resource.stored_as is not None else request.query.get("fieldSelector"))
    except Gone as err:
        await resp.prepare(request)
        await resp.write(_line({"type": "ERROR", "object": error_status(err)}))
        await resp.write_eof()
        return resp
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

    delay = cfg.faults.watch_delay_seconds
    stream = _Stream(watch, encode_event, None if delay else request.transport)
    deadline = None if timeout is None else time.monotonic() + timeout
    bookmark_due = False
    try:
        while True:
            stream.idle = False
            stream.wake.clear()  # before draining: a write from now on wakes the wait below
            events = watch.drain()
            if initial_end is not None:
                events = _with_initial_events_end(events, initial_end, resource)
                initial_end = None
            if delay:
                for ev in events:
                    await asyncio.sleep(delay)
                    await resp.write(encode_event(ev))
            elif events:  # what queued while this stream waited goes out in one write (one TLS record, one send)
                await resp.write(b"".join([encode_event(ev) for ev in events]))
            if bookmark_due:  # after the events that queued meanwhile: a bookmark never runs ahead of them
                bookmark_due = False
                await resp.write(encode_event(watch.bookmark()))
            if watch.closed:
                break
            wait = cfg.bookmark_seconds if bookmarks else None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                wait = left if wait is None else min(wait, left)
            stream.idle = stream.transport is not None
            try:
                await asyncio.wait_for(stream.wake.wait(), wait)
            except TimeoutError:
                bookmark_due = bookmarks and (deadline is None or time.monotonic() < deadline)
        with contextlib.suppress(ConnectionError):
            await resp.write_eof()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        watch.close()
    return resp


def _with_initial_events_end(events: list[WatchEvent], rv: int, resource: Resource) -> list[WatchEvent]:
    """``events`` with the initial-events-end BOOKMARK after the last of the initial state (those at or below
    ``rv``) and before any change made since."""
    split = next((i for i, ev in enumerate(events) if ev.resource_version > rv), len(events))
    end: Obj = {"apiVersion": resource.api_version, "kind": resource.kind,
                "metadata": {"resourceVersion": str(rv), "annotations": {INITIAL_EVENTS_END: "true"}}}
    return [*events[:split], WatchEvent("BOOKMARK", end, rv), *events[split:]]


class _Stream:
    """Who writes a watch stream's events. While its task waits (``idle``), a write's events go out from the one
    callback (``_Fanout``) that serves every stream after the write, straight to the connection's transport as one
    HTTP chunk: no task to wake per watcher and event (with 100 watchers, the wake-ups cost as much as the writes).
    The task writes instead (woken by ``wake``) when it is busy, when the watch closed, and when the connection is
    gone or its buffer is full: then ``resp.write`` waits for the client to read, as the stream's flow control
    needs."""

    __slots__ = ("encode", "fanout", "idle", "scheduled", "transport", "wake", "watch")

    def __init__(self, watch: Watch, encode: Callable[[WatchEvent], bytes],
                 transport: asyncio.BaseTransport | None) -> None:
        self.watch = watch
        self.encode = encode
        self.transport = transport if isinstance(transport, asyncio.WriteTransport) else None
        self.wake = asyncio.Event()
        self.fanout = _Fanout.of(asyncio.get_running_loop())
        self.idle = False
        self.scheduled = False
        watch.notify = self.notify

    def notify(self) -> None:
        """Called inside the store's write (``Watch.notify``): the events go out once the write is done."""
        if not self.idle:
            self.wake.set()
        elif not self.scheduled:
            self.scheduled = True
            self.fanout.add(self)

    def flush(self) -> None:
        self.scheduled = False
        transport = self.transport
        if not self.idle or transport is None:  # the task woke meanwhile (a timeout): it drains the queue itself
            return
        if self.watch.closed or transport.is_closing() or transport.get_write_buffer_size() > _DIRECT_LIMIT:
            self.idle = False
            self.wake.set()
            return
        events = self.watch.drain()
        if events:
            data = b"".join([self.encode(ev) for ev in events])
            transport.write(b"%x\r\n%b\r\n" % (len(data), data))  # one chunk of the chunked encoding, one write


class _Fanout:
    """The streams a loop's writes gave events to, served by one callback once the write is done."""

    _loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Fanout] = weakref.WeakKeyDictionary()

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.ready: list[_Stream] = []

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> _Fanout:
        fanout = cls._loops.get(loop)
        if fanout is None:
            fanout = cls._loops[loop] = cls(loop)
        return fanout

    def add(self, stream: _Stream) -> None:
        if not self.ready:
            self.loop.call_soon(self.flush)
        self.ready.append(stream)

    def flush(self) -> None:
        ready, self.ready = self.ready, []
        for stream in ready:
            try:
                stream.flush()
            except Exception:  # its events are lost: the stream ends, and its client watches again from its last
                log.exception("watch stream failed; closing it")
                stream.scheduled = False
                stream.watch.close()


_DIRECT_LIMIT = 2**16
"""Bytes a stream's transport may hold unsent before its task takes over and waits for the client to read."""


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
