"""A minimal client of etcd's gRPC-gateway (``/v3/...``) over ``http.client``: put, linearizable get, status.

reference §3: the gateway answers JSON with base64 keys and values and 64-bit numbers as strings; §2 and §4 item 4:
a member without quorum accepts the connection and then answers nothing, so every call carries a deadline.
etcd 3.5 serves the same ``/v3/kv/put``, ``/v3/kv/range`` and ``/v3/maintenance/status`` paths as 3.4 (only the
old ``/v3beta`` and ``/v3alpha`` prefixes are gone).
"""

from __future__ import annotations

import base64
import http.client
import json
from dataclasses import dataclass
from typing import Any

__all__ = ["GatewayError", "MemberStatus", "keys", "linearizable_get", "member_status", "move_leader", "put"]


class GatewayError(Exception):
    """A call that did not succeed: refused, reset, timed out, or answered with an error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberStatus:
    """``/v3/maintenance/status`` of one member; ids as integers (the gateway sends them as decimal strings)."""

    member_id: int
    cluster_id: int
    leader: int  # 0: this member knows no leader
    raft_term: int
    raft_index: int

    @property
    def is_leader(self) -> bool:
        """etcd-backup-restore's rule (reference §1.4): the header's member id equals the reported leader."""
        return self.leader != 0 and self.leader == self.member_id


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _post(endpoint: str, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
    host, _, port = endpoint.rpartition(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
    except (OSError, http.client.HTTPException) as err:  # refused, reset, socket.timeout, bad status line
        raise GatewayError(f"{endpoint}{path}: {type(err).__name__}: {err}") from None
    finally:
        conn.close()
    try:
        doc = json.loads(data or b"{}")
    except ValueError:
        raise GatewayError(f"{endpoint}{path}: HTTP {resp.status}, not JSON") from None
    if resp.status != 200 or not isinstance(doc, dict) or "error" in doc or "code" in doc:
        message = doc.get("message") or doc.get("error") if isinstance(doc, dict) else None
        raise GatewayError(f"{endpoint}{path}: HTTP {resp.status}: {message or data[:200]!r}")
    return doc


def put(endpoint: str, key: str, value: str, *, timeout: float) -> int:
    """Write ``key``; the revision it committed at."""
    doc = _post(endpoint, "/v3/kv/put", {"key": _b64(key), "value": _b64(value)}, timeout)
    return int((doc.get("header") or {}).get("revision", 0))


def keys(endpoint: str, prefix: str, *, timeout: float) -> list[str]:
    """Every key under ``prefix``, by a linearizable range (the quorum's answer, not a lagging member's own copy):
    etcd's range from ``prefix`` to its successor (the prefix with its last byte plus one, as clientv3's
    ``WithPrefix``), keys only."""
    raw = prefix.encode()
    end = raw[:-1] + bytes([raw[-1] + 1])
    doc = _post(endpoint, "/v3/kv/range", {"key": _b64(prefix), "range_end": base64.b64encode(end).decode(),
                                            "keys_only": True}, timeout)
    return [base64.b64decode(kv["key"]).decode() for kv in doc.get("kvs") or []]


def linearizable_get(endpoint: str, key: str, *, timeout: float) -> None:
    """A linearizable range (the gateway's default): succeeds only through a leader with quorum (reference §1.7)."""
    _post(endpoint, "/v3/kv/range", {"key": _b64(key)}, timeout)


def member_status(endpoint: str, *, timeout: float) -> MemberStatus:
    doc = _post(endpoint, "/v3/maintenance/status", {}, timeout)
    header = doc.get("header") or {}
    try:
        return MemberStatus(member_id=int(header["member_id"]), cluster_id=int(header["cluster_id"]),
                            leader=int(doc.get("leader", 0)), raft_term=int(doc.get("raftTerm", 0)),
                            raft_index=int(doc.get("raftIndex", 0)))
    except (KeyError, ValueError) as err:
        raise GatewayError(f"{endpoint}: status without {err}") from None


def move_leader(endpoint: str, target_id: int, *, timeout: float) -> None:
    """etcd's Maintenance.MoveLeader (``etcdctl move-leader``): ``endpoint`` must be the current leader's (reference
    §2: sent elsewhere it fails); it answers once the target leads, about one heartbeat later."""
    _post(endpoint, "/v3/maintenance/transfer-leadership", {"targetID": str(target_id)}, timeout)
