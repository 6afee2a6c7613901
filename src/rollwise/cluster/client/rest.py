"""The operator's direct path to the API server: plain aiohttp requests on one session, paths built from the
resource table, bodies encoded and replies decoded with msgspec.

Why not lightkube over httpx for every request: measured under ``bench/operator_on_up.py``, that stack spent about
half a millisecond per request re-parsing URLs and building request objects (httpx's ``build_request`` and
``_merge_url``), the largest single item of the operator's CPU. Here a request is a path string, a header dict and
bytes.

What is kept exactly as lightkube does it:

* the kubeconfig: lightkube loads it; the server URL comes from it, the TLS context (CA, client certificate and
  key) from lightkube's ``verify_cluster``, and the ``Authorization`` header from lightkube's own ``httpx.Auth``
  for the user (a token, a token file re-read on a 401, an exec plugin re-run on a 401, basic auth), driven here
  once per credential rather than once per request (``_Credentials``);
* errors: a non-2xx reply becomes the ``rollwise.api.errors`` class its Status body names (``status_error``); a
  connection that fails or drops mid-request is ``Unreachable`` (a 503 ServiceUnavailable, worded as kubectl
  words it);
* request metrics: every reply that arrives is passed to ``observe`` (method, host, code, seconds to the headers),
  the hook ``cli/client_metrics.py`` also hangs on lightkube's httpx client.
"""

from __future__ import annotations

import asyncio
import errno
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiohttp
import httpx2 as httpx
import msgspec
from yarl import URL

from rollwise.api import errors

__all__ = ["JSON", "MERGE_PATCH", "Observe", "RestClient", "api_path", "error_from_reply", "status_error"]

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"

Observe = Callable[[str, str, int, float], None]
"""Called once per reply: method, host, status code, seconds from sending to the reply's headers."""

_decode = msgspec.json.decode
encode_json = msgspec.json.encode


def api_path(group: str, version: str, plural: str, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
    """``/api/v1/namespaces/{ns}/pods/{name}`` or ``/apis/{group}/{version}/...``; no namespace: every one."""
    path = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    if namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    if name is not None:
        path += f"/{name}"
        if subresource is not None:
            path += f"/{subresource}"
    return path


def status_error(code: int, reason: str, message: str) -> errors.ApiStatusError:
    """The rollwise error for a failed call: by HTTP code, and by reason where one code means two things."""
    if code == 404:
        return errors.NotFound(message)
    if code == 409:
        return errors.AlreadyExists(message) if reason == "AlreadyExists" else errors.Conflict(message)
    if code == 410:
        return errors.Gone(message)
    if code == 422:
        return errors.Invalid(message)
    out = errors.ApiStatusError(message)
    out.code = code
    out.reason = reason or {403: "Forbidden", 429: "TooManyRequests", 503: "ServiceUnavailable"}.get(
        code, "InternalError")
    return out


def error_from_reply(code: int, body: bytes, content_type: str) -> errors.ApiStatusError:
    """A non-2xx reply as lightkube reads it: a JSON body is a Status (its code, reason and message); any other
    body keeps the HTTP code, with the start of the text as the message."""
    if content_type.startswith(JSON):
        try:
            status = _decode(body)
        except msgspec.DecodeError:
            status = None
        if isinstance(status, dict):
            return status_error(int(status.get("code") or code), str(status.get("reason") or ""),
                                str(status.get("message") or ""))
    return status_error(code, "", body[:200].decode(errors="replace") or f"HTTP {code}")


def unreachable(err: BaseException, server: str = "") -> errors.Unreachable:
    """A connection that failed, as kubectl words it (k8s.io/kubectl's ``StandardErrorMessage`` and client-go's
    ``url.Error``): a refused connection names the host and asks about it; a failed TLS handshake says so with the
    certificate check's reason, which no server sent."""
    unable = f"Unable to connect to the server {server}" if server else "Unable to connect to the API server"
    if (cert := _cause(err, ssl.SSLCertVerificationError)) is not None:
        return errors.Unreachable(f"{unable}: TLS handshake failed: certificate verify failed: "
                                  f"{cert.verify_message or errors.one_line(cert)}")
    if (tls := _cause(err, ssl.SSLError)) is not None:
        return errors.Unreachable(f"{unable}: TLS handshake failed: {tls.reason or errors.one_line(tls)}")
    refused = _cause(err, OSError)
    if refused is not None and refused.errno == errno.ECONNREFUSED:
        host = f"server {urlsplit(server).netloc}" if server else "API server"
        return errors.Unreachable(f"The connection to the {host} was refused - did you specify the right host or "
                                  "port?")
    return errors.Unreachable(f"{unable}: {errors.one_line(err)}")


_E = TypeVar("_E", bound=BaseException)


def _cause(err: BaseException, kind: type[_E]) -> _E | None:
    """The innermost ``kind`` in the error and what it wraps: aiohttp keeps the socket's or the TLS layer's error
    as ``os_error`` or ``certificate_error`` (its wrappers subclass them too, without their fields), others as the
    cause."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [err]
    found: _E | None = None
    while todo:
        cur = todo.pop(0)
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, kind):
            found = cur
        todo += [getattr(cur, "certificate_error", None), getattr(cur, "os_error", None), cur.__cause__,
                 cur.__context__]
    return found


# What a failed connection raises under aiohttp: its own errors, a timeout, or the socket's OSError.
_CONNECTION_ERRORS = (aiohttp.ClientError, TimeoutError, OSError)


class _Credentials:
    """The ``Authorization`` header lightkube's ``httpx.Auth`` would set, fetched once and fetched again only after
    a 401, as lightkube's token-file and exec auth do: the flow is given the 401 and may answer with a retry.

    Several requests may see the same 401; only the first refreshes (``generation``), the rest retry with its
    header."""

    def __init__(self, auth: httpx.Auth | None, server: str) -> None:
        self._auth = auth
        self._server = server
        self._header: str | None = None
        self._fetched = False
        self.generation = 0
        self._lock = asyncio.Lock()

    async def header(self) -> str | None:
        if not self._fetched:
            async with self._lock:
                if not self._fetched:
                    self._header = await self._run(None)
                    self._fetched = True
        return self._header

    async def refresh(self, seen_generation: int) -> bool:
        """After a 401 on a request sent with ``seen_generation``'s header: True if a new header is there to
        retry with."""
        async with self._lock:
            if self.generation != seen_generation:
                return True
            if self._auth is None:
                return False
            header = await self._run(401)
            if header is None:
                return False
            self._header, self.generation = header, self.generation + 1
            return True

    async def _run(self, status: int | None) -> str | None:
        """Drive the auth flow on a stand-in request: the header it sets, or after ``status``, the header of the
        retry it asks for (None: it asks for none)."""
        from lightkube.core.exceptions import ConfigError  # noqa: PLC0415 - loaded with the auth it comes from

        if self._auth is None:
            return None
        flow = self._auth.async_auth_flow(httpx.Request("GET", self._server))
        try:
            request = await flow.__anext__()
            if status is not None:
                request = await flow.asend(httpx.Response(status, request=request))
        except StopAsyncIteration:
            return None
        # An exec plugin that exits non-zero is a ConfigError; one not installed, or a token file gone, an OSError.
        # Neither is the server's fault: not the 503 a failed connection is.
        except (ConfigError, OSError) as err:
            raise errors.CredentialsUnavailable(f"getting credentials: {errors.one_line(err)}") from err
        finally:
            await flow.aclose()
        return request.headers.get("Authorization")


class RestClient:
    """Requests to one API server over one aiohttp session (opened on first use, inside the running loop).

    ``timeout`` bounds connecting and each read (lightkube's default, 10 s), except on a watch's stream, which the
    server ends itself (``timeoutSeconds``); ``limit`` bounds the open connections, watches included."""

    def __init__(self, server: str, *, ssl_context: ssl.SSLContext | None = None, auth: httpx.Auth | None = None,
                 observe: Observe | None = None, timeout: float = 10.0, limit: int = 100,
                 server_hostname: str | None = None, proxy: str | None = None) -> None:
        self.server = server.rstrip("/")
        self.host = URL(self.server).host or ""
        self.observe = observe
        self._ssl: ssl.SSLContext | bool = ssl_context if ssl_context is not None else True
        self._credentials = _Credentials(auth, self.server)
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout)
        self._stream_timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=None)
        self._limit = limit
        self._server_hostname = server_hostname  # the kubeconfig's tls-server-name: the certificate's expected name
        self._proxy = proxy
        self._session: aiohttp.ClientSession | None = None

    @classmethod
    def from_config(cls, config: Any, *, observe: Observe | None = None, server_hostname: str | None = None,
                    proxy: str | None = None) -> RestClient:
        """From lightkube's ``SingleConfig``: its server, its TLS context and its user's auth."""
        from lightkube.config.client_adapter import user_auth, verify_cluster  # noqa: PLC0415 - lightkube is heavy

        ssl_context = verify_cluster(config.cluster, config.user, config.abs_file, trust_env=False)
        return cls(config.cluster.server, ssl_context=ssl_context, auth=user_auth(config.user), observe=observe,
                   server_hostname=server_hostname, proxy=proxy)

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(ssl=self._ssl, limit=self._limit)
            self._session = aiohttp.ClientSession(connector=connector, timeout=self._timeout,
                                                  headers={"Accept": JSON, "User-Agent": "rollwise"})
        return self._session

    async def request(self, method: str, path: str, *, query: Mapping[str, str] | None = None,
                      body: Any = None, content_type: str = JSON) -> Any:
        """The decoded JSON reply (None for an empty one); a non-2xx reply raises its ``rollwise.api.errors``."""
        data = None if body is None else encode_json(body)
        try:
            async with await self._send(method, path, query, data, content_type, self._timeout) as response:
                raw = await response.read()
                if response.status >= 300:
                    raise error_from_reply(response.status, raw, response.content_type)
        except _CONNECTION_ERRORS as err:
            raise unreachable(err, self.server) from err
        return _decode(raw) if raw else None

    async def stream_lines(self, path: str, query: Mapping[str, str]) -> AsyncIterator[bytes]:
        """The reply's body line by line (a watch), for as long as the server keeps it open."""
        try:
            response = await self._send("GET", path, query, None, JSON, self._stream_timeout)
        except _CONNECTION_ERRORS as err:
            raise unreachable(err, self.server) from err
        try:
            if response.status >= 300:
                raise error_from_reply(response.status, await response.read(), response.content_type)
            pending = b""
            # Chunks, not readline: a line (one object) may be longer than aiohttp's readline limit.
            async for chunk in response.content.iter_any():
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                for line in lines:
                    if line.strip():
                        yield line
            if pending.strip():
                yield pending
            response.release()
        except _CONNECTION_ERRORS as err:
            raise unreachable(err, self.server) from err
        finally:
            response.close()  # a stream left early is not read to its end: its connection cannot be reused

    async def _send(self, method: str, path: str, query: Mapping[str, str] | None, data: bytes | None,
                    content_type: str, timeout: aiohttp.ClientTimeout) -> aiohttp.ClientResponse:
        """Send once, and once more after a 401 if the credentials have a new header to offer."""
        session = self._open()
        url = URL(self.server + path, encoded=True)  # names are DNS labels: nothing to quote
        if query:
            url = url.with_query(query)
        for attempt in (1, 2):
            headers = {"Content-Type": content_type} if data is not None else {}
            generation = self._credentials.generation
            header = await self._credentials.header()
            if header is not None:
                headers["Authorization"] = header
            started = time.monotonic()
            response = await session.request(method, url, data=data, headers=headers, timeout=timeout,
                                             allow_redirects=False, server_hostname=self._server_hostname,
                                             proxy=self._proxy)
            if self.observe is not None:
                self.observe(method, self.host, response.status, time.monotonic() - started)
            if response.status != 401 or attempt == 2 or not await self._credentials.refresh(generation):
                return response
            response.release()
        raise AssertionError("unreachable: the second attempt always returns")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
