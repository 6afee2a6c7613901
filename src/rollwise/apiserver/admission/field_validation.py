"""The ``fieldValidation`` query parameter: what the server does with fields a kind's schema does not know.

As the Kubernetes API server (1.27+, KEP-2885 server-side unknown field validation):

- ``Strict`` (``kubectl`` sends it by default): the request is refused, naming each unknown field
  (``strict decoding error: unknown field "spec.replicaz"``); here a 422 Invalid whose ``details.causes`` carry
  the field paths, so ``kubectl`` prints them;
- ``Warn`` (the default when the parameter is absent, as from lightkube): the object is stored without the unknown
  fields and the reply carries one ``Warning`` header per field;
- ``Ignore``: the unknown fields are dropped silently.

Checked at the edge, before admission, for the kinds ``rollwise.api.field_schema`` knows, in the groups where
they live, and for every custom resource by its CRD's schema (what it would prune is unknown), as kube-apiserver
does. Creates, updates (the object and
its ``status``), merge and strategic merge patches (the patch itself, its directives left alone) and server-side
apply are checked; JSON patches (operations, not an object) and the ``scale`` subresource are not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import BadRequest, FieldError, Invalid
from rollwise.api.field_schema import pruned_of_unknown_fields
from rollwise.apiserver.admission.schema import pruned_fields
from rollwise.apiserver.kinds.resources import Resource

__all__ = ["MODES", "fields_checked", "warning_header"]

MODES = ("Ignore", "Warn", "Strict")
_DEFAULT = "Warn"
# kind -> the API groups in which field_schema's schema for it applies.
_GROUPS: Mapping[str, frozenset[str]] = {
    "StatefulSet": frozenset({"apps"}),
    "Pod": frozenset({""}),
    "PersistentVolumeClaim": frozenset({""}),
    "Service": frozenset({""}),
    "Lease": frozenset({"coordination.k8s.io"}),
    "ControllerRevision": frozenset({"apps"}),
}
_OBJECT_PATCHES = {"merge", "strategic"}


def fields_checked(resource: Resource, body: Any, query: Mapping[str, str], *, sub: str = "",
                   patch_type: str | None = None, more_unknown: list[FieldError] | None = None,
                   stored: Mapping[str, Any] | None = None) -> tuple[Any, list[str]]:
    """The body to use and the warnings to send; raises Invalid (Strict) or BadRequest (an unknown mode).

    ``patch_type`` is the kind of patch (``merge``, ``strategic``, ``json``, ``apply``), None for a create or an
    update. ``stored``: the object of that name, if any (parts equal to its own are not walked again).
    ``more_unknown``: fields the served release does not have though the schema here does (the seeds'
    proposals under ``up --proposals off``); admission drops them, this reports them as the mode says."""
    mode = query.get("fieldValidation") or _DEFAULT
    if mode not in MODES:
        raise BadRequest(f'fieldValidation: Unsupported value: "{mode}": supported values: '
                         + ", ".join(f'"{m}"' for m in MODES))
    if sub == "scale" or patch_type == "json" or not isinstance(body, dict):
        return body, []
    if resource.schema:
        # a custom resource: what its CRD's schema would prune is unknown (admission prunes it; no body change)
        pruned, unknown = body, pruned_fields(body, resource.schema, stored)
    elif resource.group not in _GROUPS.get(resource.kind, ()):
        return body, []
    else:
        pruned, unknown = pruned_of_unknown_fields(body, kind=resource.kind, patch=patch_type in _OBJECT_PATCHES)
    unknown += more_unknown or []
    if not unknown:
        return body, []
    if mode == "Strict":
        errors = [FieldError(path=e.path, kind="Forbidden", rule=f'strict decoding error: unknown field "{e.path}"')
                  for e in unknown]
        raise Invalid("; ".join(map(str, errors)), errors=errors)
    return pruned, ([] if mode == "Ignore" else [f'unknown field "{e.path}"' for e in unknown])


def warning_header(text: str) -> str:
    """An RFC 7234 ``Warning`` header value as the API server sends it (code 299, agent ``-``)."""
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{quoted}"'
