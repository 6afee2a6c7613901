"""The analysis ``web`` provider (runtime/analysis_providers/web.py) against a real local HTTP server: GET with the
metric's headers, the value at Argo's ``{$.data.ok}`` jsonPath, and every failure an Error measurement saying why."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from metric_server import Answer, MetricServer, metric_server

from rollwise.api.analysis import Measured
from rollwise.runtime.analysis_providers import MEASURERS, measure


@pytest.fixture
def server() -> Iterator[MetricServer]:
    with metric_server() as running:
        yield running


def _web(url: str, **block: Any) -> dict[str, Any]:
    return {"name": "m", "provider": {"web": {"url": url, **block}}}


@pytest.mark.parametrize(("body", "path", "value"), [
    ({"data": {"ok": True}}, "{$.data.ok}", True),
    ({"data": {"rate": 0.12}}, "{$.data.rate}", 0.12),
    ({"data": {"rate": 0.12}}, "{.data.rate}", 0.12),
    ({"items": [{"v": 1}, {"v": 2}]}, "{$.items[*].v}", [1, 2]),
    ({"items": [{"v": 1}, {"v": 2}]}, "{$.items[1].v}", 2),
    ({"a": 1}, None, {"a": 1}),
])
def test_the_value_is_read_at_the_json_path_as_argo_writes_it(server: MetricServer, body: Any, path: str | None,
                                                              value: Any) -> None:
    server.answers["/metrics"] = Answer(body)
    block = {} if path is None else {"jsonPath": path}
    assert measure(_web(server.url("/metrics"), **block), timeout=5) == Measured(value)


def test_the_metric_s_headers_are_sent_with_the_get(server: MetricServer) -> None:
    server.answers["/m?set=web"] = Answer({"ok": 1})
    measured = measure(_web(server.url("/m?set=web"), jsonPath="{$.ok}",
                            headers=[{"key": "Authorization", "value": "Bearer t0ken"}]), timeout=5)
    assert measured == Measured(1)
    path, headers = server.seen[-1]
    assert path == "/m?set=web" and headers["authorization"] == "Bearer t0ken"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("answer", "block", "words"), [
    (Answer({"error": "down"}, status=503), {"jsonPath": "{$.ok}"}, "received non 2xx response code: 503"),
    (Answer(raw=b"<html>"), {"jsonPath": "{$.ok}"}, "the answer is not JSON"),
    (Answer({"ok": 1}), {"jsonPath": "{$.nothing}"}, "jsonPath '{$.nothing}' found nothing in the answer"),
    (Answer({"ok": 1}), {"jsonPath": "{$..[}"}, "is not a JSON path"),
    (Answer({"ok": 1}, delay=1.5), {"jsonPath": "{$.ok}", "timeoutSeconds": 1}, "no answer within 1s"),
])
def test_a_failed_get_is_an_error_measurement_saying_why(server: MetricServer, answer: Answer,
                                                        block: dict[str, Any], words: str) -> None:
    server.answers["/metrics"] = answer
    measured = measure(_web(server.url("/metrics"), **block), timeout=5)
    assert measured.value is None and measured.error is not None and words in measured.error


def test_a_refused_connection_and_a_bad_url_are_errors() -> None:
    refused = measure(_web(f"http://127.0.0.1:{_free_port()}/m"), timeout=5)
    assert refused.error is not None and "connection refused" in refused.error
    assert measure(_web("ftp://example/m"), timeout=5).error == "url 'ftp://example/m' is not an http or https URL"


def test_providers_are_one_table_keyed_by_the_provider_name() -> None:
    assert "web" in MEASURERS
    unknown = measure({"name": "m", "provider": {"datadog": {"query": "x"}}}, timeout=5)
    assert unknown.error == "provider datadog is not supported by this version of rollwise"
