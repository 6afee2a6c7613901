"""ZooKeeper's few client calls the lab needs over a plain socket: the jute frames of a session, ``setData``,
``create``, ``sync`` and ``getChildren`` (ZooKeeper's ``zookeeper.jute``: ConnectRequest, RequestHeader,
SetDataRequest, CreateRequest, SyncRequest, GetChildrenRequest/Response, ReplyHeader).

Each call opens a session (a ``createSession`` the leader commits through the quorum), makes its request, and closes
the session: every step succeeds only through a leader with a quorum, so a member that lost its own answers with a
closed connection or not at all, as a client sees it. A write counts as acknowledged once its own reply says 0: the
session's close after it is a courtesy whose failure does not undo the write. Frames are a 4-byte big-endian
length, then the record.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from rollwise.kubelet.process.stores.base import StoreError

__all__ = ["children", "create", "set_data"]

_CREATE, _SET_DATA, _GET_CHILDREN, _SYNC, _CLOSE = 1, 5, 8, 9, -11
_NO_NODE, _NODE_EXISTS = -101, -110
_OPEN_ACL_UNSAFE = struct.pack(">ii", 1, 31) + struct.pack(">i", 5) + b"world" + struct.pack(">i", 6) + b"anyone"


def _string(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return struct.pack(">i", len(data)) + data


def _frame(sock: socket.socket, record: bytes) -> None:
    sock.sendall(struct.pack(">i", len(record)) + record)


def _read(sock: socket.socket, end: float) -> bytes:
    def exactly(n: int) -> bytes:
        out = b""
        while len(out) < n:
            sock.settimeout(max(0.01, end - time.monotonic()))
            chunk = sock.recv(n - len(out))
            if not chunk:
                raise ConnectionResetError("connection closed")
            out += chunk
        return out

    (size,) = struct.unpack(">i", exactly(4))
    return exactly(size)


def _call(sock: socket.socket, xid: int, op: int, body: bytes, end: float) -> tuple[int, bytes]:
    """Send one request; its reply's error code (0: done) and the response record after the reply header."""
    _frame(sock, struct.pack(">ii", xid, op) + body)
    while True:
        reply = _read(sock, end)
        got, _zxid, err = struct.unpack(">iqi", reply[:16])
        if got == xid:
            return int(err), reply[16:]
        # -1: a watch event, -2: a ping answer: not ours, read on


@contextmanager
def _session(port: int, end: float) -> Iterator[socket.socket]:
    """A connected session on the member at 127.0.0.1:``port``, closed (best effort) afterwards."""
    with socket.create_connection(("127.0.0.1", port), timeout=max(0.01, end - time.monotonic())) as sock:
        session_ms = 4000
        _frame(sock, struct.pack(">iqiq", 0, 0, session_ms, 0) + _string(b"\0" * 16) + b"\0")
        answer = _read(sock, end)
        if struct.unpack(">i", answer[4:8])[0] <= 0:
            raise StoreError(f"127.0.0.1:{port}: session refused")
        yield sock
        # The request before it was answered already; a session that is never closed expires on its own.
        with suppress(OSError, struct.error):
            _call(sock, 99, _CLOSE, b"", end)


def set_data(port: int, path: str, data: bytes, *, timeout: float) -> None:
    """Set ``path`` to ``data`` through the member at 127.0.0.1:``port`` (creating it if missing). StoreError:
    refused, closed (no quorum), no answer by ``timeout``, or an error code."""
    end = time.monotonic() + timeout
    try:
        with _session(port, end) as sock:
            err, _ = _call(sock, 1, _SET_DATA, _string(path) + _string(data) + struct.pack(">i", -1), end)
            if err == _NO_NODE:
                err, _ = _call(sock, 2, _CREATE, _string(path) + _string(data) + _OPEN_ACL_UNSAFE
                               + struct.pack(">i", 0), end)
                err = 0 if err == _NODE_EXISTS else err
            if err != 0:
                raise StoreError(f"127.0.0.1:{port}: setData {path} failed with code {err}")
    except (OSError, struct.error) as err:
        raise StoreError(f"127.0.0.1:{port}: {type(err).__name__}: {err}") from None


def create(port: int, path: str, data: bytes, *, timeout: float) -> None:
    """Create the persistent znode ``path``; one that exists already counts as created (a client that retries a
    create whose answer it missed finds its own node). StoreError as ``set_data``'s."""
    end = time.monotonic() + timeout
    try:
        with _session(port, end) as sock:
            err, _ = _call(sock, 1, _CREATE, _string(path) + _string(data) + _OPEN_ACL_UNSAFE + struct.pack(">i", 0),
                           end)
            if err not in (0, _NODE_EXISTS):
                raise StoreError(f"127.0.0.1:{port}: create {path} failed with code {err}")
    except (OSError, struct.error) as err:
        raise StoreError(f"127.0.0.1:{port}: {type(err).__name__}: {err}") from None


def children(port: int, path: str, *, timeout: float) -> list[str]:
    """The names of ``path``'s children as the quorum has them: a ``sync`` first, so a follower that lags the leader
    catches up before it answers (a plain read is served from the member's own copy). StoreError as above."""
    end = time.monotonic() + timeout
    try:
        with _session(port, end) as sock:
            err, _ = _call(sock, 1, _SYNC, _string(path), end)
            if err == 0:
                err, body = _call(sock, 2, _GET_CHILDREN, _string(path) + b"\0", end)
            if err != 0:
                raise StoreError(f"127.0.0.1:{port}: getChildren {path} failed with code {err}")
            (count,) = struct.unpack(">i", body[:4])
            names, at = [], 4
            for _ in range(max(0, count)):
                (size,) = struct.unpack(">i", body[at:at + 4])
                names.append(body[at + 4:at + 4 + size].decode())
                at += 4 + size
            return names
    except (OSError, struct.error, UnicodeDecodeError) as err:
        raise StoreError(f"127.0.0.1:{port}: {type(err).__name__}: {err}") from None
