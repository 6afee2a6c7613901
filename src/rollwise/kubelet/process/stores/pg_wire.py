"""Just enough of PostgreSQL's frontend/backend protocol (version 3.0) for the lab's writer: connect with trust
authentication, run one simple query (and read the rows it answers), disconnect.

PostgreSQL's docs, "Frontend/Backend Protocol", "Message Flow" and "Message Formats": a StartupMessage (length,
protocol 196608, ``user`` and ``database`` pairs), then the server's AuthenticationOk ('R', 0), ParameterStatus and
BackendKeyData messages and ReadyForQuery ('Z'); a Query ('Q') is answered by CommandComplete ('C') or an
ErrorResponse ('E'), then ReadyForQuery; a query that returns rows sends a RowDescription ('T') and one
DataRow ('D') per row first (a column count, then each column's length, -1 for NULL, and its text). Every message
after the startup one is a type byte and a length that counts itself. A connection per statement costs a backend
fork (milliseconds), where a ``psql`` per statement costs a process start on this machine (tens to hundreds of
milliseconds): a writer sending twenty a second must not be the load it measures.
"""

from __future__ import annotations

import socket
import struct

from rollwise.kubelet.process.stores.base import StoreError

__all__ = ["query_rows", "simple_query"]

_PROTOCOL_3 = 196608


def _message(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!I", len(body) + 4) + body


def _read_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise StoreError("the server closed the connection")
        data += chunk
    return data


def _read(sock: socket.socket) -> tuple[bytes, bytes]:
    head = _read_exact(sock, 5)
    (length,) = struct.unpack("!I", head[1:])
    return head[:1], _read_exact(sock, length - 4)


def _error_text(body: bytes) -> str:
    """An ErrorResponse's fields are a code byte and a string each; 'M' is the message, 'S' the severity."""
    fields = {part[:1]: part[1:].decode(errors="replace") for part in body.split(b"\0") if part}
    return f"{fields.get(b'S', 'ERROR')}: {fields.get(b'M', '?')}"


def _row(body: bytes) -> tuple[str | None, ...]:
    (count,) = struct.unpack("!h", body[:2])
    values: list[str | None] = []
    at = 2
    for _ in range(count):
        (size,) = struct.unpack("!i", body[at:at + 4])
        at += 4
        if size < 0:
            values.append(None)
            continue
        values.append(body[at:at + size].decode(errors="replace"))
        at += size
    return tuple(values)


def _until_ready(sock: socket.socket, rows: list[tuple[str | None, ...]] | None = None) -> str | None:
    """Read to ReadyForQuery, collecting DataRows into ``rows``; the first error's text, or None."""
    error = None
    while True:
        kind, body = _read(sock)
        if kind == b"E" and error is None:
            error = _error_text(body)
        elif kind == b"D" and rows is not None:
            rows.append(_row(body))
        elif kind == b"R" and struct.unpack("!I", body[:4])[0] != 0:
            raise StoreError("the server asks for a password (only trust authentication is spoken here)")
        elif kind == b"Z":
            return error


def query_rows(host: str, port: int, sql: str, *, user: str = "postgres", database: str = "postgres",
               timeout: float) -> list[tuple[str | None, ...]]:
    """Run ``sql`` and return the rows it answers, each column as text (None: NULL); StoreError as
    ``simple_query``'s."""
    rows: list[tuple[str | None, ...]] = []
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            params = b"user\0" + user.encode() + b"\0database\0" + database.encode() + b"\0\0"
            body = struct.pack("!I", _PROTOCOL_3) + params
            sock.sendall(struct.pack("!I", len(body) + 4) + body)
            error = _until_ready(sock)
            if error is None:
                sock.sendall(_message(b"Q", sql.encode() + b"\0"))
                error = _until_ready(sock, rows)
            sock.sendall(_message(b"X", b""))
    except (OSError, struct.error) as err:
        raise StoreError(f"{host}:{port}: {type(err).__name__}: {err}") from None
    if error is not None:
        raise StoreError(f"{host}:{port}: {error}")
    return rows


def simple_query(host: str, port: int, sql: str, *, user: str = "postgres", database: str = "postgres",
                 timeout: float) -> None:
    """Run ``sql`` and return once the server says it is done; StoreError when it refuses (a replica refuses an
    INSERT: a read-only transaction), fails, or does not answer within ``timeout``."""
    query_rows(host, port, sql, user=user, database=database, timeout=timeout)
