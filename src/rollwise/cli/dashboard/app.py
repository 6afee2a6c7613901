"""The dashboard's web application (aiohttp): pages rendered with Jinja2 from the board, kept live by server-sent
events, and the vendored Chart.js for the timeline.

Read-only and local by construction: every method but GET is answered 405, a Host other than the loopback names is
refused (a page elsewhere cannot reach it through DNS rebinding), and a Content-Security-Policy lets the page run
only the scripts it was served with.

    GET /                          every set of both kinds with its rollout state
    GET /sets/NAMESPACE/NAME       one set: ordinals by revision, role and readiness, conditions, events, timeline
    GET /stream                    server-sent events: the list, on every change
    GET /sets/NAMESPACE/NAME/stream   server-sent events: the set's view and timeline, on every change
    GET /api/sets[/NAMESPACE/NAME] the same as JSON
    GET /static/...                the page's script, style sheet and Chart.js
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web
from jinja2 import Environment, PackageLoader, select_autoescape

from rollwise.api.meta import format_time
from rollwise.cli.dashboard.board import Board, SetKey
from rollwise.cli.dashboard.timeline import BANDS
from rollwise.cli.treeview import age

__all__ = ["make_app"]

BOARD: web.AppKey[Board] = web.AppKey("board", Board)
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
_STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".txt": "text/plain"}
_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.method != "GET":
        raise web.HTTPMethodNotAllowed(request.method, ["GET"], text="the dashboard is read-only: GET only\n")
    host = (request.host or "").rsplit(":", 1)[0] if not (request.host or "").startswith("[") \
        else (request.host or "").split("]")[0] + "]"
    if host not in _LOCAL_HOSTS:
        raise web.HTTPForbidden(text="the dashboard answers on 127.0.0.1 and localhost only\n")
    response = await handler(request)
    if response.prepared:  # a stream sets its own headers before it starts
        return response
    response.headers.setdefault("Content-Security-Policy", _CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def _templates() -> Environment:
    env = Environment(loader=PackageLoader("rollwise.cli.dashboard", "templates"),
                      autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
    env.filters["age"] = age
    env.filters["stamp"] = lambda t: "-" if t is None else format_time(t)  # as dashboard.js writes it
    return env


def make_app(board: Board) -> web.Application:
    app = web.Application(middlewares=[_guard])
    app[BOARD] = board
    env = _templates()

    async def index(request: web.Request) -> web.Response:
        html = env.get_template("index.html").render(sets=board.summary())
        return web.Response(text=html, content_type="text/html")

    async def set_page(request: web.Request) -> web.Response:
        key = _key(board, request)
        detail = board.detail(key)
        assert detail is not None
        html = env.get_template("set.html").render(view=detail["view"], bands=BANDS)
        return web.Response(text=html, content_type="text/html")

    async def api_sets(request: web.Request) -> web.Response:
        return web.json_response(board.summary())

    async def api_set(request: web.Request) -> web.Response:
        return web.json_response(board.detail(_key(board, request)))

    async def stream_sets(request: web.Request) -> web.StreamResponse:
        return await _stream(request, board, board.summary)

    async def stream_set(request: web.Request) -> web.StreamResponse:
        key = _key(board, request)
        return await _stream(request, board, lambda: board.detail(key))

    async def static(request: web.Request) -> web.Response:
        name = request.match_info["file"]
        suffix = name[name.rfind("."):] if "." in name else ""
        folder = resources.files("rollwise.cli.dashboard") / "static"
        if "/" in name or suffix not in _STATIC_TYPES or not (folder / name).is_file():
            raise web.HTTPNotFound()
        return web.Response(body=(folder / name).read_bytes(), content_type=_STATIC_TYPES[suffix],
                            headers={"Cache-Control": "max-age=3600"})

    for path, handler in (("/", index), ("/sets/{ns}/{name}", set_page), ("/api/sets", api_sets),
                          ("/api/sets/{ns}/{name}", api_set), ("/stream", stream_sets),
                          ("/sets/{ns}/{name}/stream", stream_set), ("/static/{file}", static)):
        app.router.add_get(path, handler, allow_head=False)
    return app


def _key(board: Board, request: web.Request) -> SetKey:
    kind = request.query.get("kind")
    key = board.find(request.match_info["ns"], request.match_info["name"], kind)
    if key is None:
        raise web.HTTPNotFound(text=f"no set {request.match_info['ns']}/{request.match_info['name']}"
                                    f"{' of kind ' + kind if kind else ''}\n")
    return key


async def _stream(request: web.Request, board: Board, payload: Callable[[], Any]) -> web.StreamResponse:
    """Server-sent events: the payload now, then again whenever it changes; ends when the set goes away or the
    page closes."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store",
                                           "Content-Security-Policy": _CSP, "X-Content-Type-Options": "nosniff"})
    await response.prepare(request)
    seen, last = -1, ""
    while True:
        seen = await board.wait(seen)
        data = payload()
        if data is None:
            await response.write(b"event: gone\ndata: {}\n\n")
            break
        text = json.dumps(data, separators=(",", ":"))
        if text != last:
            try:
                await response.write(f"data: {text}\n\n".encode())
            except (ConnectionResetError, RuntimeError):
                break
            last = text
    return response
