"""Fake member HTTP servers for role-probe tests: one server per pod name, each on a free port of 127.0.0.1, started
on first use and stopped by ``close()``. A subclass says what a pod's server answers (``handler``)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from rollwise.api.meta import Obj, name_of

__all__ = ["MemberServers", "serve"]


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server on a free port of 127.0.0.1, serving on a daemon thread until ``shutdown()``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


class MemberServers:
    def __init__(self) -> None:
        self.servers: dict[str, ThreadingHTTPServer] = {}

    def handler(self, pod: str) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def address(self, pod: Obj, port: int) -> tuple[str, int]:
        """``RoleProbes``' address: the pod's own server, whatever port the probe names."""
        name = name_of(pod)
        if name not in self.servers:
            self.servers[name] = serve(self.handler(name))
        return "127.0.0.1", self.servers[name].server_address[1]

    def close(self) -> None:
        for server in self.servers.values():
            server.shutdown()
            server.server_close()
