"""core/v1 Events with client-go's correlation (``tools/record/events_cache.go``, ``event.go``).

``record`` never blocks a reconcile: events go onto a bounded queue (1,000; overflow is dropped and counted) and
one writer task sends them. Before sending, the correlator:

* drops spam: a token bucket per source and object, burst 25, refilled at 1/300 per second;
* aggregates similar events (same object, type and reason, differing messages): past 10 within 600 s they
  become one event whose message starts ``(combined from similar events):``;
* de-duplicates identical events: a repeat PATCHes the earlier Event's ``count`` and ``lastTimestamp`` instead
  of creating another.

Each event is tried up to 12 times, 10 s apart, then dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.runtime.clock import Clock

__all__ = ["EventRecorder", "EventSink"]

log = logging.getLogger("rollwise.runtime.events")

QUEUE_SIZE = 1000
MAX_TRIES = 12
RETRY_SECONDS = 10.0
AGGREGATE_WINDOW_SECONDS = 600.0
AGGREGATE_AFTER = 10
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
CACHE_SIZE = 4096
AGGREGATE_PREFIX = "(combined from similar events): "


class EventSink(Protocol):
    async def create(self, event: Obj) -> Obj: ...

    async def patch(self, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj: ...


@dataclass(slots=True)
class _Sent:
    name: str
    namespace: str
    count: int


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class EventRecorder:
    def __init__(self, sink: EventSink, *, clock: Clock, component: str, host: str = "",
                 wall_time: Callable[[], float] = time.time) -> None:
        self.sink = sink
        self.clock = clock
        self.component = component
        self.host = host
        self.wall_time = wall_time
        self.dropped = 0
        self.sent = 0
        self._queue: asyncio.Queue[Obj] = asyncio.Queue(QUEUE_SIZE)
        self._seen: OrderedDict[tuple[Any, ...], _Sent] = OrderedDict()
        self._similar: OrderedDict[tuple[Any, ...], tuple[float, set[str]]] = OrderedDict()
        self._spam: dict[tuple[Any, ...], _Bucket] = {}
        self._seq = 0

    def record(self, involved: Obj, event_type: str, reason: str, message: str) -> None:
        """Queue an Event about ``involved`` (its apiVersion, kind and uid go into ``involvedObject``)."""
        now = self.wall_time()
        self._seq += 1
        event: Obj = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name_of(involved)}.{int(now * 1e9) + self._seq:x}",
                         "namespace": namespace_of(involved)},
            "involvedObject": {"apiVersion": involved.get("apiVersion", "v1"), "kind": involved.get("kind", ""),
                               "name": name_of(involved), "namespace": namespace_of(involved),
                               "uid": uid_of(involved),
                               "resourceVersion": str(involved.get("metadata", {}).get("resourceVersion") or "")},
            "type": event_type, "reason": reason, "message": message,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "reportingComponent": self.component, "reportingInstance": self.host,
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,  # seconds; the wire codec formats them
        }
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped += 1

    def pending(self) -> int:
        return self._queue.qsize()

    async def run(self) -> None:
        """Send queued events until cancelled."""
        while True:
            event = await self._queue.get()
            await self._send(event)

    async def flush(self) -> None:
        """Send everything queued now (shutdown, tests)."""
        while not self._queue.empty():
            await self._send(self._queue.get_nowait())

    # -- correlation -----------------------------------------------------------------------------------------

    def _allowed(self, event: Obj) -> bool:
        inv = event["involvedObject"]
        key = (self.component, inv["kind"], inv["namespace"], inv["name"], inv["uid"])
        now = self.clock.now()
        bucket = self._spam.get(key)
        if bucket is None:
            bucket = self._spam[key] = _Bucket(tokens=float(SPAM_BURST), at=now)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + (now - bucket.at) * SPAM_QPS)
        bucket.at = now
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def _aggregate(self, event: Obj) -> Obj:
        inv = event["involvedObject"]
        key = (inv["kind"], inv["namespace"], inv["name"], inv["uid"], event["type"], event["reason"])
        now = self.clock.now()
        first, messages = self._similar.get(key, (now, set()))
        if now - first > AGGREGATE_WINDOW_SECONDS:
            first, messages = now, set()
        messages.add(event["message"])
        self._similar[key] = (first, messages)
        self._similar.move_to_end(key)
        while len(self._similar) > CACHE_SIZE:
            self._similar.popitem(last=False)
        if len(messages) >= AGGREGATE_AFTER:
            return {**event, "message": AGGREGATE_PREFIX + event["message"]}
        return event

    async def _send(self, event: Obj) -> None:
        if not self._allowed(event):
            self.dropped += 1
            return
        event = self._aggregate(event)
        inv = event["involvedObject"]
        # Every aggregated event shares one key (client-go's aggregateKey), so they all count onto one Event.
        combined = event["message"].startswith(AGGREGATE_PREFIX)
        key = (inv["kind"], inv["namespace"], inv["name"], inv["uid"], event["type"], event["reason"],
               AGGREGATE_PREFIX if combined else event["message"])
        for attempt in range(MAX_TRIES):
            try:
                seen = self._seen.get(key)
                if seen is not None:
                    try:
                        await self.sink.patch(seen.namespace, seen.name, {
                            "count": seen.count + 1, "lastTimestamp": event["lastTimestamp"],
                            "message": event["message"]})
                        seen.count += 1
                        self._seen.move_to_end(key)
                        self.sent += 1
                        return
                    except NotFound:
                        del self._seen[key]  # the earlier Event expired (TTL): start a new one
                created = await self.sink.create(event)
                self._seen[key] = _Sent(name=name_of(created), namespace=namespace_of(created), count=1)
                while len(self._seen) > CACHE_SIZE:
                    self._seen.popitem(last=False)
                self.sent += 1
                return
            except ApiStatusError as err:
                log.warning("writing event %s failed (try %d of %d): %s", event["reason"], attempt + 1, MAX_TRIES,
                            err)
                if attempt + 1 < MAX_TRIES:
                    await self.clock.sleep(RETRY_SECONDS)
        self.dropped += 1
