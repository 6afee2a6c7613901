"""The event recorder: core/v1 Events with client-go's aggregation, spam filter, retries and bounded queue."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from runtime_fakes import MemoryEvents, run

from rollwise.api.meta import Obj
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.runtime import recorder as rec
from rollwise.runtime.clock import VirtualClock
from rollwise.runtime.execute import ControllerEvent
from rollwise.runtime.metrics import RuntimeMetrics
from rollwise.runtime.recorder import AsyncEventRecorder, EventRecorder, StoreEventSink

SET: Obj = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7"}}


def _ev(event_type: str, reason: str, message: str) -> ControllerEvent:
    return ControllerEvent(event_type=event_type, reason=reason, message=message)


def _recorder() -> tuple[AsyncEventRecorder, MemoryEvents, MemoryCluster, VirtualClock]:
    clock = VirtualClock()
    cluster = MemoryCluster(clock=clock.now)
    sink = MemoryEvents(cluster)
    recorder = AsyncEventRecorder(sink, clock=clock, component="rollwise", host="op-a",
                             wall_time=lambda: 1_800_000_000 + clock.now())
    return recorder, sink, cluster, clock


def test_an_event_names_the_custom_resource_it_is_about() -> None:
    recorder, _, cluster, _ = _recorder()
    recorder.record(SET, _ev("Normal", "SuccessfulCreate", "create Pod web-0 in StatefulSet web successful"))
    run(recorder.flush())
    [event] = cluster.list("Event")
    assert event["involvedObject"] == {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
                                       "name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7"}
    assert event["source"] == {"component": "rollwise", "host": "op-a"}
    assert event["count"] == 1 and event["firstTimestamp"] == 1_800_000_000


def test_a_repeated_event_counts_up_on_one_object() -> None:
    recorder, sink, cluster, clock = _recorder()

    async def go() -> None:
        for _ in range(3):
            recorder.record(SET, _ev("Warning", "FailedCreate", "quota exceeded"))
            await recorder.flush()
            await clock.advance(5.0)

    run(go())
    [event] = cluster.list("Event")
    assert event["count"] == 3 and event["lastTimestamp"] == 1_800_000_010
    assert sink.calls == ["create", "patch", "patch"]


def test_repeats_queued_while_the_writer_is_behind_go_as_one_write_with_their_count() -> None:
    recorder, sink, cluster, clock = _recorder()
    for at in (5.0, 10.0, 15.0):
        recorder.record(SET, _ev("Warning", "FailedCreate", "quota exceeded"))
        clock.jump(at)
    recorder.record(SET, _ev("Normal", "SuccessfulCreate", "create Pod web-0 in StatefulSet web successful"))
    run(recorder.flush())
    assert sink.calls == ["create", "create"]  # one per correlation key, not one per event
    failed = next(e for e in cluster.list("Event") if e["reason"] == "FailedCreate")
    assert (failed["count"], failed["firstTimestamp"], failed["lastTimestamp"]) == (3, 1_800_000_000, 1_800_000_010)
    for _ in range(2):
        recorder.record(SET, _ev("Warning", "FailedCreate", "quota exceeded"))
    run(recorder.flush())
    assert sink.calls[2:] == ["patch"] and cluster.get("Event", "default", failed["metadata"]["name"])["count"] == 5
    assert recorder.sent == 6


def test_similar_events_are_combined_after_ten_distinct_messages() -> None:
    recorder, _, cluster, _ = _recorder()
    for i in range(12):
        recorder.record(SET, _ev("Normal", "SuccessfulDelete", f"delete Pod web-{i} in StatefulSet web successful"))
    run(recorder.flush())
    events = cluster.list("Event")
    assert len(events) == 10  # nine as they are, then one combined event counting the rest
    combined = [e for e in events if e["message"].startswith(rec.AGGREGATE_PREFIX)]
    assert len(combined) == 1 and combined[0]["count"] == 3
    assert combined[0]["message"] == rec.AGGREGATE_PREFIX + "delete Pod web-11 in StatefulSet web successful"


def test_spam_is_dropped_past_a_burst_of_25_per_object_and_reason() -> None:
    recorder, _, cluster, clock = _recorder()
    for _ in range(30):
        recorder.record(SET, _ev("Normal", "Same", "same"))
    run(recorder.flush())
    assert recorder.dropped == 5 and cluster.list("Event")[0]["count"] == 25
    clock.jump(300.0)  # one token back
    recorder.record(SET, _ev("Normal", "Same", "same"))
    run(recorder.flush())
    assert cluster.list("Event")[0]["count"] == 26


def _rollout_storm(record: Callable[[ControllerEvent], None], pods: int = 50) -> None:
    """What a busy rollout of a large set says about it: a create and a delete per pod, each naming its pod."""
    for i in range(pods):
        record(_ev("Normal", "SuccessfulDelete", f"delete Pod web-{i} in StatefulSet web successful"))
        record(_ev("Normal", "SuccessfulCreate", f"create Pod web-{i} in StatefulSet web successful"))


def test_a_rare_warning_appears_after_a_hundred_normal_events_on_the_same_set_on_up() -> None:
    """``up``'s recorder (in-process store, written at once): a hundred Normal events, then the one Warning that
    says the rollout halted. client-go's bucket per object would have dropped it."""
    clock = VirtualClock()
    cluster = MemoryCluster(clock=clock.now)
    recorder = EventRecorder(StoreEventSink(cluster), now=clock.now, wall_time=lambda: 1_800_000_000 + clock.now())
    _rollout_storm(lambda ev: recorder.record(SET, ev, "statefulset-controller"))
    recorder.record(SET, _ev("Warning", "PreDeleteHookTimeout", "web-3 still carries label example.com/drain"),
                    "statefulset-controller")
    warnings = [e for e in cluster.list("Event") if e["type"] == "Warning"]
    assert [(e["reason"], e["count"]) for e in warnings] == [("PreDeleteHookTimeout", 1)]


def test_a_rare_warning_appears_after_a_hundred_normal_events_through_the_operators_writer() -> None:
    recorder, sink, cluster, _ = _recorder()
    _rollout_storm(lambda ev: recorder.record(SET, ev))
    run(recorder.flush())
    recorder.record(SET, _ev("Warning", "PodProgressTimeout", "web-7 made no progress for 300 s"))
    run(recorder.flush())
    assert [e["reason"] for e in cluster.list("Event") if e["type"] == "Warning"] == ["PodProgressTimeout"]
    # The storm itself: per-pod messages folded into one combined Event per reason, and writes held to the burst.
    combined = [e for e in cluster.list("Event") if e["message"].startswith(rec.AGGREGATE_PREFIX)]
    assert sorted(e["reason"] for e in combined) == ["SuccessfulCreate", "SuccessfulDelete"]
    assert len(sink.calls) <= 2 * rec.SPAM_BURST + 1


def test_a_storm_of_one_reason_is_still_held_to_the_burst() -> None:
    clock = VirtualClock()
    cluster = MemoryCluster(clock=clock.now)
    recorder = EventRecorder(StoreEventSink(cluster), now=clock.now)
    for i in range(1000):
        recorder.record(SET, _ev("Warning", "FailedCreate", f"create Pod web-{i % 40} failed: quota"), "sts")
    assert recorder.dropped == 1000 - rec.SPAM_BURST
    assert sum(e["count"] for e in cluster.list("Event")) == rec.SPAM_BURST


def test_a_failed_write_is_retried_ten_seconds_later() -> None:
    recorder, sink, cluster, clock = _recorder()
    sink.fail = 2

    async def go() -> None:
        recorder.record(SET, _ev("Normal", "X", "x"))
        task = asyncio.create_task(recorder.flush())
        await clock.run_until(19.0)
        assert cluster.list("Event") == []
        await clock.run_until(20.0)
        await task

    run(go())
    assert len(cluster.list("Event")) == 1 and sink.calls == ["create"] * 3


def test_the_queue_is_bounded_and_overflow_is_counted() -> None:
    recorder, _, _, _ = _recorder()
    for i in range(rec.QUEUE_SIZE + 7):
        recorder.record(SET, _ev("Normal", "R", str(i)))
    assert recorder.pending() == rec.QUEUE_SIZE and recorder.dropped == 7


def test_sent_and_dropped_events_are_exported_as_counters() -> None:
    recorder, _, _, _ = _recorder()
    metrics = RuntimeMetrics()
    metrics.count_events(lambda: recorder.sent, lambda: recorder.dropped)
    for _ in range(30):  # past the spam filter's burst of 25 per object
        recorder.record(SET, _ev("Normal", "Same", "same"))
    run(recorder.flush())
    assert metrics.registry.get_sample_value("rollwise_events_sent_total") == 25
    assert metrics.registry.get_sample_value("rollwise_events_dropped_total") == 5


def test_up_and_the_operator_correlate_alike_but_up_writes_at_once() -> None:
    """The synchronous recorder (``up``'s in-process store) counts a repeat onto one Event, as the queued one does."""
    clock = VirtualClock()
    cluster = MemoryCluster(clock=clock.now)
    recorder = EventRecorder(StoreEventSink(cluster), now=clock.now, wall_time=lambda: 1_800_000_000 + clock.now())
    for _ in range(3):
        recorder.record(SET, _ev("Warning", "FailedCreate", "quota exceeded"), "statefulset-controller")
    [event] = cluster.list("Event")
    assert event["count"] == 3 and event["source"] == {"component": "statefulset-controller"}


def test_the_simulators_recorder_keeps_every_event_uncorrelated() -> None:
    clock = VirtualClock()
    cluster = MemoryCluster(clock=clock.now)
    recorder = EventRecorder(StoreEventSink(cluster), now=clock.now, correlate=False)
    for _ in range(30):
        recorder.record(SET, _ev("Normal", "Same", "same"), "statefulset-controller")
    assert len(cluster.list("Event")) == 30 and recorder.dropped == 0
