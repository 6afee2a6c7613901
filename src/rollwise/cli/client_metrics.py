"""Process and client-request metrics beside the work queue's, under client-go's and Prometheus' usual names:

* ``process_*`` (CPU seconds, resident memory, open file descriptors, start time) and ``python_gc_*`` /
  ``python_info``: prometheus-client's own collectors, registered on the operator's registry;
* ``rest_client_requests_total{code,method,host}`` and ``rest_client_request_duration_seconds{verb,host}``:
  every request the operator's API client makes, over either client (``RequestMetrics.observe``; client-go
  ``tools/metrics``; a watch counts when its headers arrive), so a run of 403s or 429s shows on a dashboard and
  not only in the log.
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

__all__ = ["RequestMetrics", "instrument_client", "register_process_collectors"]

_LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)  # client-go's
_STARTED = "rollwise_started"


def register_process_collectors(registry: CollectorRegistry) -> None:
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)


class RequestMetrics:
    """The one rule for counting a request, whichever client sent it: by status code, method and host, and the
    time to the reply's headers by verb and host."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._requests = Counter("rest_client_requests", "HTTP requests to the API server, by status code, method "
                                 "and host.", ["code", "method", "host"], registry=registry)
        self._latency = Histogram("rest_client_request_duration_seconds", "Request latency to the headers, by verb "
                                  "and host.", ["verb", "host"], buckets=_LATENCY_BUCKETS, registry=registry)

        # The labelled series, looked up once: prometheus-client's labels() costs more than the request's count.
        self._series: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def observe(self, method: str, host: str, code: int, seconds: float | None) -> None:
        """One reply (``seconds`` None: its start was not seen)."""
        series = self._series.get((method, host, code))
        if series is None:
            series = self._series[(method, host, code)] = (
                self._requests.labels(code=str(code), method=method, host=host),
                self._latency.labels(verb=method, host=host))
        series[0].inc()
        if seconds is not None:
            series[1].observe(seconds)


def instrument_client(http: Any, metrics: RequestMetrics) -> None:
    """Count every request of an httpx ``AsyncClient`` (lightkube's) through its event hooks."""

    async def on_request(request: Any) -> None:
        request.extensions[_STARTED] = time.monotonic()

    async def on_response(response: Any) -> None:
        request = response.request
        started = request.extensions.get(_STARTED)
        metrics.observe(request.method, request.url.host or "", response.status_code,
                        None if started is None else time.monotonic() - started)

    http.event_hooks["request"].append(on_request)
    http.event_hooks["response"].append(on_response)
