"""A local metrics endpoint for the analysis tests: a ThreadingHTTPServer on a free port of 127.0.0.1 whose answers
the test sets per path (status and JSON body, or a delay), and which keeps the headers of every request."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Answer", "MetricServer", "metric_server"]


@dataclass
class Answer:
    body: Any = None
    status: int = 200
    delay: float = 0.0
    raw: bytes | None = None
    """Sent as it is instead of ``body`` as JSON."""


@dataclass
class MetricServer:
    port: int
    answers: dict[str, Answer] = field(default_factory=dict)
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def metric_server() -> Iterator[MetricServer]:
    """The server for one test, always shut down after it."""
    state = MetricServer(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            answer = state.answers.get(self.path, Answer(status=404, body={"error": "no such metric"}))
            if answer.delay:
                time.sleep(answer.delay)
            payload = answer.raw if answer.raw is not None else json.dumps(answer.body).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            # A delayed answer the provider gave up on (its timeout is what the test checks): nothing to say.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(payload)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
