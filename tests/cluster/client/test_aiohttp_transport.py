"""The operator's HTTP transport: httpx requests sent over aiohttp, replies and failures as httpx reports them."""

from __future__ import annotations

import asyncio
import socket

import httpx2 as httpx
import pytest
from aiohttp import web

from rollwise.cluster.client.aiohttp_transport import AiohttpTransport


async def _serve(app: web.Application) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    server = site._server
    assert server is not None
    return runner, server.sockets[0].getsockname()[1]


def test_a_request_goes_out_with_its_headers_and_body_and_the_reply_comes_back_whole() -> None:
    async def echo(request: web.Request) -> web.Response:
        body = await request.read()
        return web.json_response({"method": request.method, "auth": request.headers.get("Authorization"),
                                  "type": request.headers.get("Content-Type"), "body": body.decode(),
                                  "query": dict(request.query)}, status=201)

    async def go() -> None:
        app = web.Application()
        app.router.add_route("*", "/echo", echo)
        runner, port = await _serve(app)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", transport=AiohttpTransport(),
                                         headers={"Authorization": "Bearer t"}) as client:
                reply = await client.post("/echo", params={"a": "1"}, json={"x": [1, 2]})
                assert reply.status_code == 201
                assert reply.json() == {"method": "POST", "auth": "Bearer t", "type": "application/json",
                                        "body": '{"x":[1,2]}', "query": {"a": "1"}}
                assert reply.headers["Content-Type"].startswith("application/json")
        finally:
            await runner.cleanup()

    asyncio.run(go())


def test_a_streamed_reply_arrives_line_by_line_and_a_dropped_stream_is_a_read_error() -> None:
    async def lines(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        await resp.write(b'{"n":1}\n')
        await resp.write(b'{"n":2}\n')
        assert request.transport is not None
        request.transport.abort()  # the server goes away mid-stream, as a restarted API server does
        return resp

    async def go() -> list[str]:
        app = web.Application()
        app.router.add_get("/watch", lines)
        runner, port = await _serve(app)
        got: list[str] = []
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", transport=AiohttpTransport()) as client, \
                    client.stream("GET", "/watch") as reply:
                with pytest.raises(httpx.ReadError):
                    async for line in reply.aiter_lines():
                        got.append(line)
        finally:
            await runner.cleanup()
        return got

    assert asyncio.run(go()) == ['{"n":1}', '{"n":2}']


def test_a_server_that_is_not_there_is_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: the connection is refused

        async def go() -> None:
            async with httpx.AsyncClient(transport=AiohttpTransport()) as client:
                await client.get(f"http://127.0.0.1:{port}/")

        with pytest.raises(httpx.ConnectError):
            asyncio.run(go())
