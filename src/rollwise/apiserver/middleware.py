"""The middlewares of every request: authentication (bearer tokens) first, and failures as ``Status`` bodies."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from rollwise.api.errors import ApiStatusError
from rollwise.apiserver.config import ServerConfig
from rollwise.apiserver.http import BodyError, json_reply, status_reply
from rollwise.apiserver.status import error_status

__all__ = ["USER", "auth_middleware", "errors_middleware"]

log = logging.getLogger("rollwise.apiserver")

USER = web.RequestKey("user", str)
_OPEN_PATHS = ("/version", "/healthz", "/readyz", "/livez")


@web.middleware
async def errors_middleware(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
                             ) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiStatusError as err:
        return json_reply(error_status(err), err.code)
    except BodyError as err:
        return status_reply(err.code, err.message)
    except web.HTTPException as exc:
        if exc.status == 404:
            return status_reply(404, "the server could not find the requested resource")
        if exc.status == 405:
            return status_reply(405, "the server does not allow this method on the requested resource")
        raise
    except Exception as err:  # a traceback is a bug; the client still gets a Status
        log.exception("internal error on %s %s", request.method, request.path)
        return status_reply(500, f"Internal error occurred: {type(err).__name__}: {err}")


def auth_middleware(cfg: ServerConfig) -> Any:
    @web.middleware
    async def auth(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
                   ) -> web.StreamResponse:
        user = "anonymous"
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header.startswith("Bearer ") else ""
        if token and token in cfg.tokens:
            user = cfg.tokens[token]
        elif token and cfg.any_token:
            user = token
        elif cfg.tokens and not request.path.rstrip("/").startswith(_OPEN_PATHS):
            return status_reply(401, "Unauthorized")
        request[USER] = user
        return await handler(request)

    return auth
