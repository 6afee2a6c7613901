"""A GET to a member's HTTP port with a deadline, as JSON: the admin and monitoring endpoints the stores serve."""

from __future__ import annotations

import http.client
import json
from typing import Any

from rollwise.kubelet.process.stores.base import StoreError

__all__ = ["get_json"]


def get_json(port: int, path: str, *, timeout: float) -> tuple[int, Any]:
    """(status, the decoded JSON body) of ``GET 127.0.0.1:<port><path>``; StoreError when there is no JSON answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        data = resp.read()
    except (OSError, http.client.HTTPException) as err:
        raise StoreError(f"127.0.0.1:{port}{path}: {type(err).__name__}: {err}") from None
    finally:
        conn.close()
    try:
        return resp.status, json.loads(data or b"null")
    except ValueError:
        raise StoreError(f"127.0.0.1:{port}{path}: HTTP {resp.status}, not JSON") from None
