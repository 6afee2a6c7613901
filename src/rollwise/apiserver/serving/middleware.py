"""The middlewares of every request: authentication first, and failures as ``Status`` bodies.

Authentication, in order: ``up``'s own bearer token (the user ``admin``); a service-account token the server signed
(``tokens.py``); with ``--any-token``, any token as the user's name; else a client certificate the CA signed (its
common name the user, its organizations the groups, as kube-apiserver's x509 authenticator reads it); else, where
authentication is on, a 401. kube-apiserver tries the certificate before
the tokens; they only disagree for a client that presents two valid credentials, which ``up``'s kubeconfig does
(its token is ``admin``, its certificate ``kubernetes-admin``, both superusers).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from rollwise.api.errors import ApiStatusError
from rollwise.apiserver.serving.config import ServerConfig
from rollwise.apiserver.serving.http import BodyError, json_reply, status_reply
from rollwise.apiserver.serving.status import error_status

__all__ = ["GROUPS", "USER", "auth_middleware", "errors_middleware"]

log = logging.getLogger("rollwise.apiserver")

USER = web.RequestKey("user", str)
GROUPS = web.RequestKey("groups", frozenset)
"""Groups the authenticator gives beyond those a user's name implies (``authz.groups_of``)."""
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
        user, groups = "anonymous", frozenset[str]()
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header.startswith("Bearer ") else ""
        found = cfg.authenticate_token(token) if token and cfg.authenticate_token is not None else None
        certified = _client_certificate(request)
        if token and token in cfg.tokens:
            user = cfg.tokens[token]
        elif found is not None:
            user, groups = found
        elif token and cfg.any_token:
            user = token
        elif certified is not None:
            user, groups = certified
        elif cfg.tokens and not request.path.rstrip("/").startswith(_OPEN_PATHS):
            return status_reply(401, "Unauthorized")
        request[USER] = user
        request[GROUPS] = groups
        return await handler(request)

    return auth


def _client_certificate(request: web.Request) -> tuple[str, frozenset[str]] | None:
    """(common name, organizations) of a client certificate the TLS handshake verified against the CA."""
    transport = request.transport
    peer = transport.get_extra_info("peercert") if transport is not None else None
    if not peer:
        return None
    names = [(k, v) for rdn in peer.get("subject", ()) for k, v in rdn]
    user = next((v for k, v in names if k == "commonName"), "")
    if not user:
        return None
    return user, frozenset(v for k, v in names if k == "organizationName") | {"system:authenticated"}
