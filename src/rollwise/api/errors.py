"""The exception tree, in one place (shared by the memory store, the CLI and, later, the real API client).

::

    RollwiseError
    ├── InvalidObject(ValueError)      bad input: carries every FieldError found
    └── ApiStatusError                 a Kubernetes API failure, with HTTP code and Status reason
        ├── BadRequest          400  BadRequest      (a malformed request: a selector that does not parse)
        ├── Forbidden           403  Forbidden       (not allowed: RBAC, or a namespace that may not go)
        ├── NotFound            404  NotFound
        ├── AlreadyExists       409  AlreadyExists
        ├── Conflict            409  Conflict        (stale resourceVersion)
        ├── Gone                410  Gone            (a watch position too old)
        ├── UnsupportedMediaType 415 UnsupportedMediaType (a body or patch type the server does not take)
        ├── Invalid             422  Invalid         (the API server's validation refused the object)
        ├── InternalError       500  InternalError   (injected by tests, or a server fault)
        └── ServerTimeout       504  Timeout         (injected by tests: no answer in time)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AlreadyExists",
    "ApiStatusError",
    "BadRequest",
    "Conflict",
    "CredentialsUnavailable",
    "FieldError",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "InvalidObject",
    "NotFound",
    "RollwiseError",
    "ServerTimeout",
    "UnsupportedMediaType",
    "missing_after_refusal",
    "one_line",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldError:
    """One problem with one field, rendered the way the Kubernetes API server words it.

    ``rule`` is the human sentence (``must be greater than 0``); ``kind`` is the Kubernetes error type
    (``Invalid value``, ``Required value``, ``Unsupported value``, ``Forbidden``, ``Duplicate value``).
    """

    path: str
    rule: str
    value: Any = None
    kind: str = "Invalid value"

    def __str__(self) -> str:
        if not self.kind:  # a bare message (an admission policy's denial: kube-apiserver's "<field>: <message>")
            return f"{self.path}: {self.rule}"
        if self.kind in ("Required value", "Forbidden", "Too long", "Too many"):
            return f"{self.path}: {self.kind}: {self.rule}"
        return f"{self.path}: {self.kind}: {_render(self.value)}: {self.rule}"

    def under(self, prefix: str) -> FieldError:
        """The same error with its path nested under ``prefix`` (``objects[0]`` + ``spec.replicas``)."""
        path = f"{prefix}.{self.path}" if self.path and not self.path.startswith("[") else prefix + self.path
        return FieldError(path=path, rule=self.rule, value=self.value, kind=self.kind)


def _render(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        try:
            return json.dumps(value, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):
            return str(value)
    return str(value)


class RollwiseError(Exception):
    """The root of every error rollwise raises on purpose."""


class InvalidObject(RollwiseError, ValueError):
    """An object or file failed validation; ``errors`` lists every problem with its field path."""

    def __init__(self, errors: list[FieldError], *, source: str = "") -> None:
        self.errors = list(errors)
        self.source = source
        lines = "; ".join(str(e) for e in self.errors)
        super().__init__(f"{source}: {lines}" if source else lines)


class ApiStatusError(RollwiseError):
    """A failed API call, shaped like a Kubernetes ``Status`` (``code`` and ``reason``)."""

    code = 500
    reason = "InternalError"

    def __init__(self, message: str = "") -> None:
        self.message = message or self.reason
        super().__init__(self.message)


class BadRequest(ApiStatusError):
    code = 400
    reason = "BadRequest"


class Forbidden(ApiStatusError):
    code = 403
    reason = "Forbidden"


class NotFound(ApiStatusError):
    code = 404
    reason = "NotFound"


class AlreadyExists(ApiStatusError):
    code = 409
    reason = "AlreadyExists"


class Conflict(ApiStatusError):
    code = 409
    reason = "Conflict"


class Gone(ApiStatusError):
    code = 410
    reason = "Gone"


class UnsupportedMediaType(ApiStatusError):
    code = 415
    reason = "UnsupportedMediaType"


class Invalid(ApiStatusError):
    code = 422
    reason = "Invalid"

    def __init__(self, message: str = "", *, errors: list[FieldError] | None = None,
                 concerns: tuple[str, str] | None = None) -> None:
        self.errors = list(errors or [])
        self.concerns = concerns
        """The kind and group the errors are about when that is not the request's resource (upstream's
        ``ListOptions``, ``meta.k8s.io``, for a list's query), with no name."""
        super().__init__(message or "; ".join(str(e) for e in self.errors))


class CredentialsUnavailable(ApiStatusError):
    """The client could not get the user's credentials (an exec plugin that failed or is not installed, a token
    file gone), so sent nothing. A failed call like any other to its callers, which back off and retry (a plugin
    may work on the next try); a command prints it as kubectl does: ``error: getting credentials: ...``."""

    code = 401
    reason = "Unauthorized"


class InternalError(ApiStatusError):
    code = 500
    reason = "InternalError"


class ServerTimeout(ApiStatusError):
    code = 504
    reason = "Timeout"


class Unreachable(ApiStatusError):
    """No server answered: the connection was refused, dropped or timed out, or its TLS handshake failed. A 503 to
    whatever retries (the operator's workers back off as for a server's 503), but said as kubectl says it: nothing
    came from a server, so it is not an ``Error from server``."""

    code = 503
    reason = "ServiceUnavailable"


def one_line(err: BaseException) -> str:
    """An exception's message on one line (its class name when it has none), for a message that quotes it."""
    return " ".join(str(err).split()) or type(err).__name__


def missing_after_refusal(err: ApiStatusError, permission: str) -> str:
    """What a 401 or 403 says is missing, for the line that logs it: RBAC's 403 lacks ``permission``; a 401 lacks
    an identity, which no Role can grant."""
    if err.code == 403:
        return f"missing permission: {permission}"
    return "missing credentials: the kubeconfig's user or the service account token"
