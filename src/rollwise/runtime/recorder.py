"""The one event recorder: a controller's events become core/v1 Events on the object they concern, with client-go's
correlation (``tools/record/events_cache.go``, ``event.go``), for every driver.

- ``event_object`` builds the Event (one shape everywhere: the involved object's apiVersion, kind, uid and
  resourceVersion, so ``kubectl events --for`` selects the built-in and the custom StatefulSet apart; the source
  component and host; first and last timestamps and a count).
- ``Correlator`` is client-go's ``EventCorrelator``: it drops spam (a token bucket, burst 25, refilled at 1/300 per
  second), aggregates similar events (same object, type and reason, differing messages: past
  10 within 600 s they become one event whose message starts ``(combined from similar events):``) and turns an
  identical repeat into a PATCH of the earlier Event's ``count`` and ``lastTimestamp``. One departure, which the
  upstream notes allow as long as the API server stays protected (reference/adoption-and-events.md, "Events"):
  client-go keeps one bucket per source and object, so after a busy rollout (about 25 events) every later event
  of the set is dropped, its rare Warnings (``PreDeleteHookTimeout``, ``PodProgressTimeout``) included. Here the
  bucket is per source, object, type and reason: a storm of one reason is held to 25 and then one per 5 minutes
  as upstream's, while a reason seldom seen keeps its own tokens. The controllers' reasons are a fixed vocabulary,
  so the writes one object can cause stay bounded; repeated per-pod events (``create Pod web-7 ...``) are folded
  by the aggregator into one counted Event first.
- ``EventRecorder`` writes through a synchronous sink at once (``up``'s in-process store; the simulator's run
  record, where nothing reads Events back and every event a controller emitted is kept: ``correlate=False``).
- ``AsyncEventRecorder`` never blocks a reconcile, as client-go's broadcaster: events go onto a bounded queue
  (1,000; overflow is dropped and counted) and one writer task correlates and sends them, each tried up to 12 times,
  10 s apart (the operator, over the API). What queued while it wrote goes as one write per correlation key.
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
from rollwise.cluster.protocol import Cluster
from rollwise.runtime.clock import AsyncClock
from rollwise.runtime.execute import ControllerEvent

__all__ = ["AsyncEventRecorder", "AsyncEventSink", "ControllerEvents", "Correlator", "EventRecorder", "EventSink",
           "StoreEventSink", "event_object"]

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


class ControllerEvents(Protocol):
    """Where a controller's events go (``SetController``'s ``recorder``)."""

    def record(self, obj: Obj, ev: ControllerEvent, component: str) -> None: ...


class EventSink(Protocol):
    """Synchronous Event writes: an in-process store, or the simulator's run record."""

    def create(self, event: Obj) -> Obj: ...

    def patch(self, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj: ...


class AsyncEventSink(Protocol):
    """Event writes over an API client."""

    async def create(self, event: Obj) -> Obj: ...

    async def patch(self, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj: ...


def event_object(involved: Obj, ev: ControllerEvent, component: str, *, at: float, seq: int,
                 host: str = "") -> Obj:
    """The ``v1`` Event for ``ev`` about ``involved`` at wall time ``at``, named ``<object>.<hex>``, unique per
    recorder (``seq``) and across restarts (the time)."""
    meta = involved.get("metadata") or {}
    return {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": f"{name_of(involved)}.{int(at * 1e9) + seq:x}", "namespace": namespace_of(involved)},
        "involvedObject": {"apiVersion": involved.get("apiVersion", "v1"), "kind": involved.get("kind", ""),
                           "name": name_of(involved), "namespace": namespace_of(involved), "uid": uid_of(involved),
                           "resourceVersion": str(meta.get("resourceVersion") or "")},
        "type": ev.event_type, "reason": ev.reason, "message": ev.message,
        "source": {"component": component, **({"host": host} if host else {})},
        "reportingComponent": component, "reportingInstance": host,
        "firstTimestamp": at, "lastTimestamp": at, "count": 1,  # seconds; the wire codec formats them
    }


@dataclass(slots=True)
class _Sent:
    name: str
    namespace: str
    count: int


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


@dataclass(frozen=True, slots=True)
class Correlated:
    """What to write for one event: the event (its message aggregated or not), and, for a repeat, the earlier
    Event to count it onto."""

    event: Obj
    key: tuple[Any, ...]
    repeat_of: _Sent | None


class Correlator:
    """client-go's ``EventCorrelator`` over an injected clock (``now``, monotonic or virtual seconds)."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._seen: OrderedDict[tuple[Any, ...], _Sent] = OrderedDict()
        self._similar: OrderedDict[tuple[Any, ...], tuple[float, set[str]]] = OrderedDict()
        self._spam: OrderedDict[tuple[Any, ...], _Bucket] = OrderedDict()

    def correlate(self, event: Obj) -> Correlated | None:
        """None: spam, drop it."""
        if not self._allowed(event):
            return None
        event = self._aggregate(event)
        inv = event["involvedObject"]
        # Every aggregated event shares one key (client-go's aggregateKey), so they all count onto one Event.
        combined = event["message"].startswith(AGGREGATE_PREFIX)
        key = (inv["kind"], inv["namespace"], inv["name"], inv["uid"], event["type"], event["reason"],
               AGGREGATE_PREFIX if combined else event["message"])
        return Correlated(event=event, key=key, repeat_of=self._seen.get(key))

    def counted(self, c: Correlated, times: int = 1) -> None:
        """The repeat (``times`` of it) was counted onto its earlier Event."""
        assert c.repeat_of is not None
        c.repeat_of.count += times
        self._seen.move_to_end(c.key)

    def created(self, c: Correlated, stored: Obj, count: int = 1) -> None:
        """A new Event was written for ``c`` (counting ``count``): repeats count onto it from now on."""
        self._seen[c.key] = _Sent(name=name_of(stored), namespace=namespace_of(stored), count=count)
        while len(self._seen) > CACHE_SIZE:
            self._seen.popitem(last=False)

    def expired(self, c: Correlated) -> None:
        """The earlier Event is gone (its TTL): the repeat starts a new one."""
        self._seen.pop(c.key, None)

    def _allowed(self, event: Obj) -> bool:
        inv = event["involvedObject"]
        key = (event["source"].get("component"), inv["kind"], inv["namespace"], inv["name"], inv["uid"],
               event["type"], event["reason"])
        now = self._now()
        bucket = self._spam.get(key)
        if bucket is None:
            bucket = self._spam[key] = _Bucket(tokens=float(SPAM_BURST), at=now)
            while len(self._spam) > CACHE_SIZE:  # an LRU, as client-go's spam filter cache
                self._spam.popitem(last=False)
        self._spam.move_to_end(key)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + (now - bucket.at) * SPAM_QPS)
        bucket.at = now
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True

    def _aggregate(self, event: Obj) -> Obj:
        inv = event["involvedObject"]
        key = (inv["kind"], inv["namespace"], inv["name"], inv["uid"], event["type"], event["reason"])
        now = self._now()
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


def _count_patch(c: Correlated, times: int = 1) -> dict[str, Any]:
    assert c.repeat_of is not None
    return {"count": c.repeat_of.count + times, "lastTimestamp": c.event["lastTimestamp"],
            "message": c.event["message"]}


class StoreEventSink:
    """Events into an in-process store, written under their source component's name."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def create(self, event: Obj) -> Obj:
        return self.cluster.create(event, actor=str(event["source"]["component"]), handed_over=True)

    def patch(self, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj:
        return self.cluster.patch("Event", namespace, name, merge, actor="event-recorder")


class EventRecorder:
    """Events written at once through a synchronous ``sink``. ``now``: the clock the spam filter and aggregation
    run on; ``wall_time``: the events' timestamps. ``correlate=False`` writes every event as it comes."""

    def __init__(self, sink: EventSink, *, now: Callable[[], float], wall_time: Callable[[], float] = time.time,
                 host: str = "", correlate: bool = True) -> None:
        self.sink = sink
        self.wall_time = wall_time
        self.host = host
        self.correlator = Correlator(now) if correlate else None
        self.dropped = 0
        self._seq = 0

    def record(self, obj: Obj, ev: ControllerEvent, component: str) -> None:
        self._seq += 1
        event = event_object(obj, ev, component, at=self.wall_time(), seq=self._seq, host=self.host)
        try:
            self._write(event)
        except ApiStatusError as err:  # an event is bookkeeping: never fail the write it reports
            self.dropped += 1
            log.debug("event %s about %s not recorded: %s", ev.reason, name_of(obj), err)

    def _write(self, event: Obj) -> None:
        if self.correlator is None:
            self.sink.create(event)
            return
        c = self.correlator.correlate(event)
        if c is None:
            self.dropped += 1
            return
        if c.repeat_of is not None:
            try:
                self.sink.patch(c.repeat_of.namespace, c.repeat_of.name, _count_patch(c))
                self.correlator.counted(c)
                return
            except NotFound:
                self.correlator.expired(c)
        self.correlator.created(c, self.sink.create(c.event))


class AsyncEventRecorder:
    """Events queued by ``record`` (never blocking), correlated and sent by ``run``'s writer task."""

    def __init__(self, sink: AsyncEventSink, *, clock: AsyncClock, component: str, host: str = "",
                 wall_time: Callable[[], float] = time.time) -> None:
        self.sink = sink
        self.clock = clock
        self.component = component
        self.host = host
        self.wall_time = wall_time
        self.correlator = Correlator(clock.now)
        self.dropped = 0
        self.sent = 0
        self._queue: asyncio.Queue[Obj] = asyncio.Queue(QUEUE_SIZE)
        self._seq = 0

    def record(self, obj: Obj, ev: ControllerEvent, component: str | None = None) -> None:
        """Queue an Event about ``obj``; ``component`` defaults to the recorder's own."""
        self._seq += 1
        event = event_object(obj, ev, component or self.component, at=self.wall_time(), seq=self._seq,
                             host=self.host)
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped += 1

    def pending(self) -> int:
        return self._queue.qsize()

    async def run(self) -> None:
        """Send queued events until cancelled: each time, everything queued so far, folded (``_send_batch``)."""
        while True:
            batch = [await self._queue.get()]
            await self._send_batch(batch + self._take_queued())

    async def flush(self) -> None:
        """Send everything queued now (shutdown, tests)."""
        while not self._queue.empty():
            await self._send_batch(self._take_queued())

    def _take_queued(self) -> list[Obj]:
        out = []
        while not self._queue.empty():
            out.append(self._queue.get_nowait())
        return out

    async def _send_batch(self, events: list[Obj]) -> None:
        """Correlate the events in order, then write one request per correlation key: what client-go would send
        as a create and n - 1 count patches (or n patches) goes as one write carrying the count. Events about
        different objects are independent, so writing them grouped changes no Event's final state; the requests
        are fewer exactly when the writer falls behind (a rollout of many sets at once)."""
        groups: dict[tuple[Any, ...], tuple[Correlated, int, float]] = {}
        for event in events:
            c = self.correlator.correlate(event)
            if c is None:
                self.dropped += 1
                continue
            held = groups.get(c.key)
            if held is None:
                groups[c.key] = (c, 1, c.event["firstTimestamp"])
            else:  # the latest message and time, the earlier one's Event to count onto
                groups[c.key] = (Correlated(event=c.event, key=c.key, repeat_of=held[0].repeat_of), held[1] + 1,
                                 held[2])
        for c, count, first in groups.values():
            await self._send(c, count, first)

    async def _send(self, c: Correlated, count: int, first: float) -> None:
        for attempt in range(MAX_TRIES):
            try:
                if c.repeat_of is not None:
                    try:
                        await self.sink.patch(c.repeat_of.namespace, c.repeat_of.name, _count_patch(c, count))
                        self.correlator.counted(c, count)
                        self.sent += count
                        return
                    except NotFound:
                        self.correlator.expired(c)
                        c = Correlated(event=c.event, key=c.key, repeat_of=None)
                event = c.event if count == 1 else {**c.event, "firstTimestamp": first, "count": count}
                self.correlator.created(c, await self.sink.create(event), count)
                self.sent += count
                return
            except ApiStatusError as err:
                log.warning("writing event %s failed (try %d of %d): %s", c.event["reason"], attempt + 1, MAX_TRIES,
                            err)
                if attempt + 1 < MAX_TRIES:
                    await self.clock.sleep(RETRY_SECONDS)
        self.dropped += count
