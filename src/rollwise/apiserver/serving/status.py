"""Kubernetes ``Status`` bodies for failures, from the exception tree in ``rollwise.api.errors``.

The HTTP status always equals ``code``; ``details.causes`` carries every field path rollwise's validation found,
so ``kubectl apply`` of an invalid set prints them the way a real API server's reply would.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.errors import ApiStatusError, FieldError, Invalid
from rollwise.apiserver.kinds.resources import Resource

__all__ = ["REASONS", "aggregate", "error_status", "resource_error_status", "status_body", "success_status"]

# Reason per code for failures raised here rather than through the tree.
REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
           406: "NotAcceptable", 409: "Conflict", 410: "Expired", 415: "UnsupportedMediaType", 422: "Invalid",
           429: "TooManyRequests", 500: "InternalError", 504: "Timeout"}

# The tree's Gone means a watch position too old: the API server words that reason "Expired".
_REASON_OVERRIDES = {"Gone": "Expired"}

_CAUSE_TYPES = {"Invalid value": "FieldValueInvalid", "Required value": "FieldValueRequired",
                "Unsupported value": "FieldValueNotSupported", "Forbidden": "FieldValueForbidden",
                "Duplicate value": "FieldValueDuplicate"}


def status_body(code: int, message: str, *, reason: str | None = None, details: dict[str, Any] | None = None,
                ) -> dict[str, Any]:
    # kube-apiserver's field order (metav1.Status): details before code, as clients that compare bodies expect.
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason or REASONS.get(code, "Unknown")}
    if details:
        body["details"] = details
    body["code"] = code
    return body


def _cause(err: FieldError) -> dict[str, Any]:
    return {"reason": _CAUSE_TYPES.get(err.kind, "FieldValueInvalid"), "message": str(err).split(": ", 1)[-1],
            "field": err.path}


def error_status(err: ApiStatusError, *, kind: str = "", group: str = "", name: str = "") -> dict[str, Any]:
    """The Status for an API error, with the resource it concerns and, for Invalid, the causes."""
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    message = err.message
    causes = getattr(err, "causes", None)  # an apply's field-manager conflicts (ownership.ApplyConflict)
    if causes:
        details["causes"] = causes
    if isinstance(err, Invalid) and err.errors:
        details["causes"] = [_cause(e) for e in err.errors]
        what = f"{kind}.{group}" if group else kind
        if kind:
            message = f'{what} "{name}" is invalid: {aggregate(err.errors)}'
    return status_body(err.code, message, reason=_REASON_OVERRIDES.get(err.reason, err.reason), details=details)


def aggregate(errors: list[Any]) -> str:
    """Errors in one line as apimachinery's ``utilerrors.Aggregate`` prints them: one alone, several distinct
    ones in brackets joined by ", " (a repeated message once)."""
    seen = list(dict.fromkeys(str(e) for e in errors))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


def resource_error_status(err: ApiStatusError, resource: Resource, name: str) -> dict[str, Any]:
    """The Status for a failed request on ``resource``, its details naming what failed as upstream does: the kind
    for Invalid (or what the errors concern instead, such as a list's options, with no name), the plural
    otherwise."""
    if isinstance(err, Invalid):
        if err.concerns is not None:
            kind, group = err.concerns
            return error_status(err, kind=kind, group=group)
        return error_status(err, kind=resource.kind, group=resource.group, name=name)
    return error_status(err, kind=resource.plural, group=resource.group, name=name)


def success_status(*, kind: str, group: str, name: str, uid: str) -> dict[str, Any]:
    details = {"name": name, "group": group, "kind": kind, "uid": uid} if group else {"name": name, "kind": kind,
                                                                                      "uid": uid}
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
