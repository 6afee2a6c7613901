"""The ``web`` provider (Argo Rollouts' ``metricproviders/webmetric``): GET a URL with the metric's headers, read
the JSON answer, and take the value at ``jsonPath``.

``jsonPath`` is written as Argo writes it, a Kubernetes-style template (``{$.data.ok}``, ``{$.items[0].rate}``;
kubectl's ``{.data.ok}`` reads the same): the braces are taken off and the rest is read by ``jsonpath-ng``. One
match is the value; several are a list (the condition sees ``result[0]``...); none is an error naming the path. No
``jsonPath`` (or ``{$}``): the whole answer. An answer that is not 2xx, not JSON, or does not come within the
timeout is an Error measurement saying so (Argo: ``received non 2xx response code``).
"""

from __future__ import annotations

import http.client
import json
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from jsonpath_ng import parse as parse_jsonpath  # type: ignore[import-untyped]
from jsonpath_ng.exceptions import JsonPathParserError  # type: ignore[import-untyped]

from rollwise.api.analysis import Measured

__all__ = ["MAX_BODY", "json_path_value", "measure_web"]

MAX_BODY = 1 << 20
"""The most of an answer read (1 MiB): a metric is a small document."""


def json_path_value(doc: Any, path: str | None) -> Measured:
    """The value at ``path`` (``{$.data.ok}``) in ``doc``, as a measurement."""
    text = (path or "").strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text in ("", "$"):
        return Measured(doc)
    if text.startswith((".", "[")):  # kubectl's form, {.data.ok}: the root is implied
        text = "$" + text
    try:
        matches = [m.value for m in parse_jsonpath(text).find(doc)]
    except (JsonPathParserError, ValueError, AttributeError) as err:
        return Measured(error=f"jsonPath {path!r} is not a JSON path: {err}")
    if not matches:
        return Measured(error=f"jsonPath {path!r} found nothing in the answer")
    return Measured(matches[0] if len(matches) == 1 else matches)


def measure_web(metric: Mapping[str, Any], *, timeout: float) -> Measured:
    """One GET of the metric's ``web`` block (its arguments substituted)."""
    block = (metric.get("provider") or {}).get("web") or {}
    url = str(block.get("url", ""))
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return Measured(error=f"url {url!r} is not an http or https URL")
    seconds = float(block.get("timeoutSeconds") or timeout)
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=seconds,
                                           context=ssl.create_default_context())
    else:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=seconds)
    headers = {"Accept": "application/json", "User-Agent": "rollwise-analysis"}
    headers.update({str(h["key"]): str(h["value"]) for h in block.get("headers") or () if isinstance(h, Mapping)})
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request("GET", target, headers=headers)
        response = conn.getresponse()
        status, body = response.status, response.read(MAX_BODY)
    except TimeoutError:
        return Measured(error=f"GET {url}: no answer within {seconds:g}s")
    except ConnectionRefusedError:
        return Measured(error=f"GET {url}: connection refused")
    except (http.client.HTTPException, OSError) as err:
        return Measured(error=f"GET {url}: {type(err).__name__}: {err}")
    finally:
        conn.close()
    if not 200 <= status < 300:
        return Measured(error=f"GET {url}: received non 2xx response code: {status}")
    try:
        doc = json.loads(body)
    except ValueError:
        return Measured(error=f"GET {url}: the answer is not JSON ({body[:64]!r})")
    return json_path_value(doc, block.get("jsonPath"))
