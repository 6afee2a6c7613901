"""The ``prometheus`` analysis provider: one instant query, ``GET {address}/api/v1/query``, as a measurement.

Argo Rollouts' ``metricproviders/prometheus``, one of the providers of ``analysis_providers`` (their contract is
there): the pure controller in ``controllers/analysis`` decides when a metric is due and folds what this returns into
the run's status; this does the I/O, off the drivers' event loops.

What a query gives, by Prometheus' ``resultType`` (HTTP API, "Expression query result formats",
prometheus/docs/querying/api.md):

- ``vector``: the samples' values as a list of numbers, in the order Prometheus gives them; exactly one sample gives
  that one number, so ``successCondition: result == 3`` reads ``sum(...)`` directly; no sample gives ``[]``;
- ``scalar``: its number; ``string``: its string;
- ``matrix``: an error (a range vector is no measurement; Argo Rollouts' provider refuses it too,
  argo-rollouts/metricproviders/prometheus/prometheus.go).

Values are Prometheus' strings turned into numbers: a whole number (``"3"``) an int, the rest floats, so ``"NaN"``
and ``"+Inf"`` arrive as float NaN and infinity; what a condition makes of them is the controller's rule.
``status: "error"`` (bad query, timeout on the server, and so on) is a measurement error carrying Prometheus' own
``errorType`` and ``error``; so are an unreachable server, an answer that is not Prometheus' JSON and a query that
took longer than the timeout.
"""

from __future__ import annotations

import http.client
import json
import math
import re
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

from rollwise.api.analysis import Measured

__all__ = ["MAX_BODY", "PrometheusError", "instant_query", "measure_prometheus"]

Number = int | float
_WHOLE = re.compile(r"[-+]?[0-9]{1,18}")
MAX_BODY = 8 << 20
"""Bytes of an answer read at most: a vector of a few thousand series; a larger answer is an error, not cut."""


class PrometheusError(Exception):
    """No measurement: the message says why, naming Prometheus' own words where it gave any."""


def measure_prometheus(metric: Mapping[str, Any], *, timeout: float) -> Measured:
    """Measure ``metric`` (an AnalysisTemplate metric whose ``provider.prometheus`` has ``address`` and ``query``,
    arguments already substituted) with one instant query. Each wait on the server (connect, then the answer) is
    bounded by the block's ``timeout`` (seconds, as Argo's), or by ``timeout`` when it names none."""
    try:
        spec = _provider(metric)
        own = spec.get("timeout")
        seconds = timeout if own is None else _seconds(own)
        return Measured(value=instant_query(str(spec["address"]), str(spec["query"]), timeout=seconds))
    except PrometheusError as err:
        return Measured(error=str(err))


def instant_query(address: str, query: str, *, timeout: float) -> Number | str | list[Number]:
    """The value of ``query`` now, from the Prometheus server at ``address`` (``http[s]://host:port[/prefix]``);
    PrometheusError when there is none. The server is told the timeout too, so it stops evaluating when we stop
    waiting (the API's ``timeout`` parameter)."""
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PrometheusError(f"address {address!r} is not an http:// or https:// URL")
    path = f"{parts.path.rstrip('/')}/api/v1/query?{urlencode({'query': query, 'timeout': f'{timeout:g}s'})}"
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout,
                                           context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Accept": "application/json", "User-Agent": "rollwise-analysis"})
        response = conn.getresponse()
        body = response.read(MAX_BODY + 1)
        status = response.status
    except TimeoutError:
        raise PrometheusError(f"prometheus at {address}: no answer within {timeout:g}s") from None
    except ConnectionRefusedError:
        raise PrometheusError(f"prometheus at {address}: connection refused") from None
    except http.client.HTTPException as err:
        raise PrometheusError(f"prometheus at {address}: not an HTTP answer ({type(err).__name__})") from None
    except OSError as err:
        raise PrometheusError(f"prometheus at {address}: {type(err).__name__}: {err.strerror or err}") from None
    finally:
        conn.close()
    if len(body) > MAX_BODY:
        raise PrometheusError(f"prometheus at {address}: answer larger than {MAX_BODY} bytes")
    return _value(address, status, body)


def _value(address: str, status: int, body: bytes) -> Number | str | list[Number]:
    """The measurement in one answer of ``/api/v1/query`` (its JSON envelope, any HTTP status: Prometheus answers
    errors with 400, 422 or 503 and the same envelope)."""
    try:
        doc = json.loads(body)
    except ValueError:
        raise PrometheusError(f"prometheus at {address}: HTTP {status}, not JSON: {body[:200]!r}") from None
    if not isinstance(doc, dict) or doc.get("status") not in ("success", "error"):
        raise PrometheusError(f"prometheus at {address}: HTTP {status}, not a Prometheus API answer")
    if doc["status"] == "error":
        kind = doc.get("errorType") or "error"
        raise PrometheusError(f"prometheus at {address}: {kind}: {doc.get('error') or f'HTTP {status}'}")
    data = doc.get("data")
    kind = data.get("resultType") if isinstance(data, dict) else None
    result = data.get("result") if isinstance(data, dict) else None
    try:
        if kind == "vector" and isinstance(result, list):
            values = [_number(sample["value"]) for sample in result]
            return values[0] if len(values) == 1 else values
        if kind == "scalar":
            return _number(result)
        if kind == "string" and isinstance(result, list) and len(result) == 2:
            return str(result[1])
    except (KeyError, TypeError, ValueError):
        raise PrometheusError(f"prometheus at {address}: a {kind} result of an unknown shape") from None
    if kind == "matrix":
        raise PrometheusError(f"prometheus at {address}: the query gives a range vector (matrix); "
                              "an analysis needs an instant vector or a scalar")
    raise PrometheusError(f"prometheus at {address}: unknown result type {kind!r}")


def _number(pair: Any) -> Number:
    """A sample's ``[unix time, "value"]`` as a number: an int where Prometheus writes a whole number (``"3"``, Go's
    shortest form of 3.0), so the measurement reads ``3`` as Prometheus and Argo show it; else a float (Prometheus
    writes NaN and infinities as ``"NaN"``, ``"+Inf"``, ``"-Inf"``, which ``float`` reads)."""
    if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[1], str):
        raise ValueError(pair)
    return int(pair[1]) if _WHOLE.fullmatch(pair[1]) else float(pair[1])


def _provider(metric: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = (metric.get("provider") or {}).get("prometheus")
    if not isinstance(spec, Mapping):
        raise PrometheusError(f"metric {metric.get('name')!r} has no prometheus provider")
    for key in ("address", "query"):
        if not spec.get(key):
            raise PrometheusError(f"metric {metric.get('name')!r}: provider.prometheus.{key} is required")
    return spec


def _seconds(value: Any) -> float:
    """The block's ``timeout``: seconds, a number (validation takes a whole number of at least 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PrometheusError(f"provider.prometheus.timeout {value!r} is not a number of seconds")
    if not math.isfinite(value) or value <= 0:
        raise PrometheusError(f"provider.prometheus.timeout {value!r} must be a positive number of seconds")
    return float(value)
