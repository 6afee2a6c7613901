"""Probes over aiohttp, and the write notes that feed the consistency store."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client import CollectorRegistry, Counter
from runtime_fakes import run

from rollwise.cluster.store.memory import MemoryCluster
from rollwise.operator.probes import health_app, metrics_app, parse_addr
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.execute import Call
from rollwise.runtime.recording import WriteNotes


@pytest.mark.parametrize(("addr", "expected"), [(":8080", ("0.0.0.0", 8080)), ("127.0.0.1:0", ("127.0.0.1", 0)),
                                                ("[::1]:9", ("[::1]", 9))])
def test_addresses_parse_as_host_and_port(addr: str, expected: tuple[str, int]) -> None:
    assert parse_addr(addr) == expected


def test_readyz_follows_the_informers_and_healthz_the_leader_check() -> None:
    waiting = ["Pod informer"]
    problem: list[str | None] = [None]

    async def go() -> None:
        app = health_app(ready=lambda: list(waiting), healthy=lambda: problem[0])
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            reply = await client.get("/readyz")
            assert reply.status == 503 and "Pod informer" in await reply.text()
            waiting.clear()
            assert (await client.get("/readyz")).status == 200
            assert (await client.get("/healthz")).status == 200
            problem[0] = "leader election: lease not renewed"
            assert (await client.get("/healthz")).status == 500

    run(go())


def test_metrics_serve_the_prometheus_text_format() -> None:
    registry = CollectorRegistry()
    Counter("rollwise_stale_sync_skips", "help", ["controller"], registry=registry).labels(controller="sts").inc()

    async def go() -> None:
        async with TestClient(TestServer(metrics_app(registry), host="127.0.0.1")) as client:
            reply = await client.get("/metrics")
            assert reply.status == 200 and reply.headers["Content-Type"].startswith("text/plain")
            assert 'rollwise_stale_sync_skips_total{controller="sts"} 1.0' in await reply.text()

    run(go())


def test_recording_notes_each_write_and_the_graceful_delete_reply_for_tracked_kinds_only() -> None:
    now = [0.0]
    cluster = MemoryCluster(clock=lambda: now[0])
    seen = {"Pod": "0"}
    store = ConsistencyStore(lambda resource: seen[resource])
    notes = WriteNotes(store, owner="web", owner_uid="u", tracked=frozenset({"Pod"}))

    def through_notes(verb: str, *args: Any) -> Any:  # a call as the executor makes it, with the hooks around it
        call = notes.before(Call(verb, args, {}))
        reply = getattr(cluster, call.verb)(*call.args)
        notes.after(call, reply)
        return reply

    pod = through_notes("create", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0",
                                                                                  "namespace": "default"},
                                   "spec": {"terminationGracePeriodSeconds": 30}})
    through_notes("create", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x",
                                                                                  "namespace": "default"}})
    assert store.behind("web") == ["Pod"]  # the ConfigMap has no informer: never waited for
    seen["Pod"] = pod["metadata"]["resourceVersion"]
    assert store.ensure_ready("web")
    terminating = through_notes("delete", "Pod", "default", "web-0")
    assert terminating is not None and terminating["metadata"].get("deletionTimestamp") is not None
    assert store.behind("web") == ["Pod"]  # the graceful delete's reply is a write to wait for too
    seen["Pod"] = terminating["metadata"]["resourceVersion"]
    assert store.ensure_ready("web")


def test_plan_samples_export_under_their_own_names_and_odd_label_sets_never_break_a_scrape() -> None:
    from prometheus_client import generate_latest

    from rollwise.controllers.plan import MetricSample
    from rollwise.runtime.metrics import RuntimeMetrics

    metrics = RuntimeMetrics()
    labels = (("namespace", "default"), ("statefulset", "web"))
    metrics.plan_samples.record([
        MetricSample(name="statefulset_unavailable_replicas", value=2, labels=labels),
        MetricSample(name="statefulset_unavailable_replicas", value=1, labels=(("namespace", "x"),)),
        MetricSample(name="statefulset_pod_progress_timeouts_total", value=1, kind="counter", labels=labels),
    ])
    text = generate_latest(metrics.registry).decode()
    assert 'statefulset_unavailable_replicas{namespace="default",statefulset="web"} 2.0' in text
    assert 'statefulset_pod_progress_timeouts_total{namespace="default",statefulset="web"} 1.0' in text
