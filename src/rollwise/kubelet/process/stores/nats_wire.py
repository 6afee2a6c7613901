"""A NATS request over a plain socket: the client protocol's few lines a request needs (NATS' protocol docs).

``INFO`` from the server, then ``CONNECT`` (with headers and no-responders, so a request nobody answers fails at
once with a 503 status rather than timing out), ``SUB`` to an inbox, ``PUB`` with that inbox as the reply subject,
and the first ``MSG``/``HMSG`` on it is the answer. The server's ``PING`` is answered with ``PONG``. One
connection per request (``request_each``: per batch of requests): the lab's writer and the step-down need nothing
more, and a fresh connection to a member that lost its quorum fails the way a client's would.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Sequence
from typing import Any

from rollwise.kubelet.process.stores.base import StoreError

__all__ = ["request", "request_each"]


def _read_line(sock: socket.socket, buf: bytearray) -> bytes:
    while b"\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("connection closed")
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\r\n")
    buf[:] = rest
    return line


def _read_exact(sock: socket.socket, buf: bytearray, n: int) -> bytes:
    while len(buf) < n + 2:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("connection closed")
        buf += chunk
    data = bytes(buf[:n])
    buf[:] = buf[n + 2:]
    return data


def request(port: int, subject: str, payload: dict[str, Any], *, timeout: float, user: str | None = None,
            password: str | None = None) -> dict[str, Any]:
    """Send ``payload`` (JSON) to ``subject`` through the server at 127.0.0.1:``port``; the JSON answer.
    StoreError: refused, reset, no responder, no answer by ``timeout``, or an answer that is not a JSON object."""
    [answer] = request_each(port, [(subject, payload)], timeout=timeout, user=user, password=password)
    return answer


def request_each(port: int, calls: Sequence[tuple[str, dict[str, Any]]], *, timeout: float,
                 user: str | None = None, password: str | None = None) -> list[dict[str, Any]]:
    """``request`` for each (subject, payload) in turn over one connection (a reader of a thousand stream messages
    opens one, not a thousand), all within ``timeout``; the answers in order. StoreError as ``request``'s."""
    end = time.monotonic() + timeout
    inbox = f"_INBOX.{uuid.uuid4().hex}"
    connect: dict[str, Any] = {"verbose": False, "pedantic": False, "headers": True, "no_responders": True,
                               "name": "rollwise", "lang": "python", "version": "0"}
    if user is not None:
        connect.update(user=user, **{"pass": password or ""})
    answers: list[dict[str, Any]] = []
    subject = calls[0][0] if calls else ""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            buf = bytearray()
            sock.settimeout(max(0.01, end - time.monotonic()))
            if not _read_line(sock, buf).startswith(b"INFO"):
                raise StoreError(f"127.0.0.1:{port}: not a NATS server")
            sock.sendall(b"CONNECT " + json.dumps(connect).encode() + f"\r\nSUB {inbox}.* 1\r\n".encode())
            for index, (subject, payload) in enumerate(calls):
                body = json.dumps(payload).encode()
                sock.sendall(f"PUB {subject} {inbox}.{index} {len(body)}\r\n".encode() + body + b"\r\n")
                answers.append(_answer(sock, buf, f"{inbox}.{index}".encode(), end, port, subject))
    except (OSError, ValueError) as err:
        raise StoreError(f"127.0.0.1:{port}: {subject}: {type(err).__name__}: {err}") from None
    return answers


def _answer(sock: socket.socket, buf: bytearray, reply_to: bytes, end: float, port: int,
            subject: str) -> dict[str, Any]:
    """Read to the message on ``reply_to`` (answering the server's PINGs; a late answer to an earlier call is
    skipped) and return it as JSON."""
    while True:
        sock.settimeout(max(0.01, end - time.monotonic()))
        line = _read_line(sock, buf)
        if line == b"PING":
            sock.sendall(b"PONG\r\n")
        elif line.startswith(b"-ERR"):
            raise StoreError(f"127.0.0.1:{port}: {line.decode(errors='replace')}")
        elif line.startswith((b"MSG ", b"HMSG ")):
            head = line.split()
            data = _read_exact(sock, buf, int(head[-1]))
            if head[1] != reply_to:
                continue
            if head[0] == b"HMSG":  # headers, then the payload; a status line of 503: no responders
                header, data = data[:int(head[-2])], data[int(head[-2]):]
                if b" 503" in header.split(b"\r\n", 1)[0]:
                    raise StoreError(f"127.0.0.1:{port}: no responders for {subject}")
            doc = json.loads(data or b"null")
            if not isinstance(doc, dict):
                raise StoreError(f"127.0.0.1:{port}: {subject} answered {data[:200]!r}")
            return doc
