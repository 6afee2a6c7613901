"""The ``prometheus`` analysis provider against a fake Prometheus on 127.0.0.1 that answers ``/api/v1/query`` with
the JSON shapes Prometheus' HTTP API documents (prometheus/docs/querying/api.md): each result type, an empty
vector, NaN and infinities, the ``error`` envelope (with 400 and 422 as Prometheus sends it), and answers that are
not Prometheus' at all. Every failure is a measurement error whose message says why; none raises."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from member_servers import serve

from rollwise.api.analysis import Measured
from rollwise.runtime.analysis_providers.prometheus import measure_prometheus

T = 1764331200.123


def _vector(*values: str) -> dict[str, Any]:
    return {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": "etcd_server_has_leader", "instance": f"127.0.0.1:{2379 + i}"}, "value": [T, v]}
        for i, v in enumerate(values)]}}


ANSWERS: dict[str, tuple[int, Any]] = {
    "one": (200, _vector("1")),
    "three": (200, _vector("1", "0", "0.25")),
    "none": (200, _vector()),
    "odd": (200, _vector("NaN", "+Inf", "-Inf")),
    "scalar(2)": (200, {"status": "success", "data": {"resultType": "scalar", "result": [T, "2.5"]}}),
    '"up"': (200, {"status": "success", "data": {"resultType": "string", "result": [T, "up"]}}),
    "range[1m]": (200, {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {}, "values": [[T, "1"], [T + 15, "1"]]}]}}),
    "sum(": (400, {"status": "error", "errorType": "bad_data",
                   "error": "1:5: parse error: unclosed left parenthesis"}),
    "slow": (422, {"status": "error", "errorType": "timeout", "error": "query timed out in expression evaluation"}),
    "warned": (200, {**_vector("4"), "warnings": ["PromQL info: metric might not be a counter"]}),
    "html": (502, "<html>Bad Gateway</html>"),
    "foreign": (200, {"ok": True}),
    "broken": (200, {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}}),
}


class _FakePrometheus(BaseHTTPRequestHandler):
    requests: list[dict[str, list[str]]] = []
    release = threading.Event()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        params = parse_qs(url.query)
        type(self).requests.append({"path": [url.path], **params})
        query = params.get("query", [""])[0]
        if url.path not in {"/prom/api/v1/query", "/api/v1/query"}:
            self._answer(404, "404 page not found")
        elif query == "hang":
            type(self).release.wait()
        else:
            self._answer(*ANSWERS[query])

    def _answer(self, status: int, doc: Any) -> None:
        body = doc.encode() if isinstance(doc, str) else json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain" if isinstance(doc, str) else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def prometheus() -> Iterator[str]:
    server: ThreadingHTTPServer = serve(_FakePrometheus)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        _FakePrometheus.release.set()
        server.shutdown()
        server.server_close()


def _measure(address: str, query: str, *, within: float = 5.0, **provider: Any) -> Measured:
    metric = {"name": "leader", "provider": {"prometheus": {"address": address, "query": query, **provider}}}
    return measure_prometheus(metric, timeout=within)


def test_a_vector_of_one_sample_is_its_value(prometheus: str) -> None:
    assert _measure(prometheus, "one") == Measured(value=1.0)


def test_a_whole_number_is_an_int_as_prometheus_writes_it_and_the_rest_floats(prometheus: str) -> None:
    assert [type(v) for v in _measure(prometheus, "three").value] == [int, int, float]
    assert type(_measure(prometheus, "scalar(2)").value) is float


def test_a_vector_of_several_samples_is_the_list_of_their_values_in_order(prometheus: str) -> None:
    assert _measure(prometheus, "three") == Measured(value=[1.0, 0.0, 0.25])


def test_an_empty_vector_is_an_empty_list(prometheus: str) -> None:
    assert _measure(prometheus, "none") == Measured(value=[])


def test_nan_and_infinities_arrive_as_floats(prometheus: str) -> None:
    value = _measure(prometheus, "odd").value
    assert isinstance(value, list) and math.isnan(value[0]) and value[1:] == [math.inf, -math.inf]


def test_a_scalar_is_its_float_and_a_string_its_string(prometheus: str) -> None:
    assert _measure(prometheus, "scalar(2)") == Measured(value=2.5)
    assert _measure(prometheus, '"up"') == Measured(value="up")


def test_warnings_do_not_spoil_a_value(prometheus: str) -> None:
    assert _measure(prometheus, "warned") == Measured(value=4.0)


def test_the_query_goes_url_encoded_with_the_timeout_under_the_address_prefix(prometheus: str) -> None:
    _FakePrometheus.requests.clear()
    assert _measure(f"{prometheus}/prom/", "one", within=7).value == 1.0
    assert _FakePrometheus.requests == [{"path": ["/prom/api/v1/query"], "query": ["one"], "timeout": ["7s"]}]


def test_the_blocks_own_timeout_bounds_the_query_else_the_drivers(prometheus: str) -> None:
    _FakePrometheus.requests.clear()
    _measure(prometheus, "one", within=30, timeout=3)
    _measure(prometheus, "one", within=2, timeout=10)
    _measure(prometheus, "one", within=2)
    assert [r["timeout"] for r in _FakePrometheus.requests] == [["3s"], ["10s"], ["2s"]]


def test_a_prometheus_error_is_a_measurement_error_in_prometheus_words(prometheus: str) -> None:
    assert _measure(prometheus, "sum(") == Measured(
        error=f"prometheus at {prometheus}: bad_data: 1:5: parse error: unclosed left parenthesis")
    assert _measure(prometheus, "slow") == Measured(
        error=f"prometheus at {prometheus}: timeout: query timed out in expression evaluation")


def test_a_range_vector_is_refused_as_no_measurement(prometheus: str) -> None:
    error = _measure(prometheus, "range[1m]").error
    assert error is not None and "range vector (matrix)" in error


@pytest.mark.parametrize(("query", "says"), [
    ("html", "HTTP 502, not JSON: b'<html>Bad Gateway</html>'"),
    ("foreign", "HTTP 200, not a Prometheus API answer"),
    ("broken", "a vector result of an unknown shape"),
])
def test_an_answer_that_is_not_prometheus_json_is_an_error_naming_it(prometheus: str, query: str, says: str) -> None:
    measured = _measure(prometheus, query)
    assert measured.value is None and measured.error == f"prometheus at {prometheus}: {says}"


def test_a_wrong_path_prefix_is_an_error_with_the_status(prometheus: str) -> None:
    assert _measure(f"{prometheus}/elsewhere", "one").error == (
        f"prometheus at {prometheus}/elsewhere: HTTP 404, not JSON: b'404 page not found'")


def test_a_server_that_does_not_answer_in_time_is_an_error_saying_so(prometheus: str) -> None:
    assert _measure(prometheus, "hang", within=0.2) == Measured(
        error=f"prometheus at {prometheus}: no answer within 0.2s")


def test_an_unreachable_server_is_an_error_saying_so() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakePrometheus)
    port = server.server_address[1]
    server.server_close()  # the port is free again: nothing listens there
    assert _measure(f"http://127.0.0.1:{port}", "one") == Measured(
        error=f"prometheus at http://127.0.0.1:{port}: connection refused")


@pytest.mark.parametrize(("provider", "says"), [
    ({"address": "127.0.0.1:9090", "query": "up"}, "address '127.0.0.1:9090' is not an http:// or https:// URL"),
    ({"address": "http://127.0.0.1:9090"}, "metric 'leader': provider.prometheus.query is required"),
    ({"query": "up"}, "metric 'leader': provider.prometheus.address is required"),
    ({"address": "http://127.0.0.1:9090", "query": "up", "timeout": "soon"},
     "provider.prometheus.timeout 'soon' is not a number of seconds"),
    ({"address": "http://127.0.0.1:9090", "query": "up", "timeout": 0},
     "provider.prometheus.timeout 0 must be a positive number of seconds"),
])
def test_a_metric_without_a_usable_provider_is_an_error_naming_the_field(provider: dict[str, Any], says: str) -> None:
    metric = {"name": "leader", "provider": {"prometheus": provider}}
    assert measure_prometheus(metric, timeout=1) == Measured(error=says)


def test_a_metric_of_another_provider_is_an_error_naming_the_metric() -> None:
    metric = {"name": "leader", "provider": {"web": {"url": "http://127.0.0.1:1/"}}}
    assert measure_prometheus(metric, timeout=1) == Measured(error="metric 'leader' has no prometheus provider")
