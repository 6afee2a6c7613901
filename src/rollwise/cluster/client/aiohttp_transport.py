"""An httpx transport over aiohttp's client: lightkube (and its httpx client: auth, event hooks, URLs, errors) on
top, aiohttp's connection pool and C HTTP parser underneath: ``rollwise run --http-transport aiohttp``. (The default,
``direct``, leaves lightkube and httpx off the request path altogether: ``cluster/client/rest.py``.)

Why: measured under ``bench/operator_on_up.py``, httpx's own pool (httpcore) took about half of the operator's
HTTP time, much of it checking every idle pooled connection for readability on each request (a ``poll`` per idle
connection per request); aiohttp's pool hands out an idle connection without a system call, and parses replies in
C. Everything above the transport is unchanged: lightkube builds the requests, httpx runs the auth flow and the
hooks that count requests (``cli/client_metrics.py``), and decodes the body.

What the transport owes httpx: the reply's status and raw headers, a body stream that raises httpx's own errors
(``ReadError``, ``ReadTimeout``) when the connection fails mid-stream (a watch relies on it), and the request's
timeouts: ``connect`` and ``read`` (None for a watch) from the request's ``timeout`` extension. Replies are not
decompressed here: httpx decodes by ``Content-Encoding``, as it does over its own transport.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx2 as httpx

__all__ = ["AiohttpTransport"]


class _Body(httpx.AsyncByteStream):
    """A reply's body as httpx reads it: aiohttp's stream, errors translated; closing releases the connection."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except TimeoutError as err:
            raise httpx.ReadTimeout(str(err) or "read timed out", request=self._request) from err
        except aiohttp.ClientError as err:
            raise httpx.ReadError(str(err) or type(err).__name__, request=self._request) from err

    async def aclose(self) -> None:
        self._response.release()


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Send httpx requests with one aiohttp session (made on first use, inside the running loop).

    ``ssl_context`` verifies the server (and carries a client certificate, if the kubeconfig has one);
    ``limit`` bounds the open connections, watches included (aiohttp's default is 100)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None, *, limit: int = 100) -> None:
        self._ssl: ssl.SSLContext | bool = ssl_context if ssl_context is not None else True
        self._limit = limit
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(ssl=self._ssl, limit=self._limit)
            # No decompression and no headers of aiohttp's own: httpx already set them and decodes the reply.
            self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False,
                                                  skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding"),
                                                  timeout=aiohttp.ClientTimeout(total=None))
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        session = self._open()
        timeouts: dict[str, Any] = request.extensions.get("timeout") or {}
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeouts.get("connect"),
                                        sock_read=timeouts.get("read"))
        body = await request.aread()
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() not in ("host", "content-length")]
        try:
            response = await session.request(request.method, str(request.url), headers=headers, data=body or None,
                                             timeout=timeout, allow_redirects=False)
        except TimeoutError as err:
            raise httpx.ReadTimeout(str(err) or "timed out", request=request) from err
        except aiohttp.ClientConnectorError as err:
            raise httpx.ConnectError(str(err), request=request) from err
        except aiohttp.ClientError as err:
            raise httpx.ReadError(str(err) or type(err).__name__, request=request) from err
        return httpx.Response(status_code=response.status, headers=response.raw_headers,
                              stream=_Body(response, request), extensions={"http_version": b"HTTP/1.1"})

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
