"""``/metrics``, ``/healthz`` and ``/readyz`` over aiohttp (operator-plan §1.3 item 10).

* ``/readyz``: 200 once every informer has synced (a standby replica is ready too: its caches are warm);
* ``/healthz``: 200 unless this process believes it leads while its last successful renew is older than
  leaseDuration plus a tolerance (client-go ``tools/leaderelection/healthzadaptor.go``): a leader stuck that long
  should be restarted;
* ``/metrics``: the Prometheus text format of the runtime's registry.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

__all__ = ["health_app", "metrics_app", "parse_addr", "serve"]


def parse_addr(addr: str) -> tuple[str, int]:
    """``":8080"`` (every interface), ``"127.0.0.1:0"`` (a free port) → (host, port)."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"address {addr!r} must look like HOST:PORT or :PORT, the port from 0 to 65535")
    return host or "0.0.0.0", int(port)


def health_app(*, ready: Callable[[], list[str]], healthy: Callable[[], str | None]) -> web.Application:
    """``ready()`` lists what is not ready yet (empty: ready); ``healthy()`` says what is wrong, or None."""

    async def readyz(_: web.Request) -> web.Response:
        waiting = ready()
        if waiting:
            return web.Response(status=503, text="not ready: " + ", ".join(waiting) + "\n")
        return web.Response(text="ok\n")

    async def healthz(_: web.Request) -> web.Response:
        problem = healthy()
        return web.Response(status=500, text=problem + "\n") if problem else web.Response(text="ok\n")

    app = web.Application()
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/healthz", healthz)
    return app


def metrics_app(registry: CollectorRegistry) -> web.Application:
    async def metrics(_: web.Request) -> web.Response:
        return web.Response(body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    return app


async def serve(app: web.Application, addr: str) -> tuple[web.AppRunner, int]:
    """Start ``app`` on ``addr``; returns the runner (to ``cleanup()``) and the port actually bound."""
    host, port = parse_addr(addr)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    return runner, int(bound)
