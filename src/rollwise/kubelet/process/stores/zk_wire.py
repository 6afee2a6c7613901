"""One ZooKeeper write over a plain socket: the jute frames a session and a ``setData`` need (ZooKeeper's
``zookeeper.jute``: ConnectRequest, RequestHeader, SetDataRequest, CreateRequest, ReplyHeader).

Each call opens a session (a ``createSession`` the leader commits through the quorum), sets the znode (creating it
the first time), and closes the session: every step succeeds only through a leader with a quorum, so a member that
lost its own answers with a closed connection or not at all, as a client sees it. Frames are a 4-byte big-endian
length, then the record.
"""

from __future__ import annotations

import socket
import struct
import time

from rollwise.kubelet.process.stores.base import StoreError

__all__ = ["set_data"]

_CREATE, _SET_DATA, _CLOSE = 1, 5, -11
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


def _call(sock: socket.socket, xid: int, op: int, body: bytes, end: float) -> int:
    """Send one request; its reply's error code (0: done)."""
    _frame(sock, struct.pack(">ii", xid, op) + body)
    while True:
        reply = _read(sock, end)
        got, _zxid, err = struct.unpack(">iqi", reply[:16])
        if got == xid:
            return int(err)
        # -1: a watch event, -2: a ping answer: not ours, read on


def set_data(port: int, path: str, data: bytes, *, timeout: float) -> None:
    """Set ``path`` to ``data`` through the member at 127.0.0.1:``port`` (creating it if missing). StoreError:
    refused, closed (no quorum), no answer by ``timeout``, or an error code."""
    end = time.monotonic() + timeout
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            session_ms = 4000
            _frame(sock, struct.pack(">iqiq", 0, 0, session_ms, 0) + _string(b"\0" * 16) + b"\0")
            answer = _read(sock, end)
            if struct.unpack(">i", answer[4:8])[0] <= 0:
                raise StoreError(f"127.0.0.1:{port}: session refused")
            err = _call(sock, 1, _SET_DATA, _string(path) + _string(data) + struct.pack(">i", -1), end)
            if err == _NO_NODE:
                err = _call(sock, 2, _CREATE, _string(path) + _string(data) + _OPEN_ACL_UNSAFE
                            + struct.pack(">i", 0), end)
                err = 0 if err == _NODE_EXISTS else err
            if err != 0:
                raise StoreError(f"127.0.0.1:{port}: setData {path} failed with code {err}")
            _call(sock, 3, _CLOSE, b"", end)
    except (OSError, struct.error) as err:
        raise StoreError(f"127.0.0.1:{port}: {type(err).__name__}: {err}") from None
