"""Free loopback ports for etcd members, never handed out twice by one allocator.

The kernel picks each port (bind to 127.0.0.1:0), so runs in parallel — other tests, other users of the machine —
do not collide the way fixed ports (2379/2380, reference §3) would. The socket is closed before etcd binds the
port, so another program could take it in between; ports are drawn from the ephemeral range, where that is rare,
and the runtime reports a member whose port is taken as a failed start rather than joining the wrong cluster
(the per-run ``--initial-cluster-token`` guards that).
"""

from __future__ import annotations

import socket
import threading

__all__ = ["PortAllocator"]


class PortAllocator:
    def __init__(self) -> None:
        self._given: set[int] = set()
        self._lock = threading.Lock()

    def reserve(self, ports: list[int]) -> None:
        """Ports taken already (kept from an earlier run): never handed out."""
        with self._lock:
            self._given.update(ports)

    def allocate(self, count: int) -> list[int]:
        """``count`` distinct ports on 127.0.0.1, none given out before by this allocator."""
        if count < 1:
            raise ValueError("count must be >= 1")
        out: list[int] = []
        held: list[socket.socket] = []
        with self._lock:
            try:
                while len(out) < count:
                    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    s.bind(("127.0.0.1", 0))
                    held.append(s)  # held open until all are chosen, so the kernel cannot repeat one
                    port = s.getsockname()[1]
                    if port not in self._given:
                        out.append(port)
            finally:
                for s in held:
                    s.close()
            self._given.update(out)
        return out
