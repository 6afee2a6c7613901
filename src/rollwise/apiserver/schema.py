"""Custom resources against their CRD's ``openAPIV3Schema``: structural pruning and type checks.

What a real API server does to a custom resource before storing it, so that a test passing here would pass there:
fields the schema does not declare are dropped (pruning) unless a node says ``x-kubernetes-preserve-unknown-fields``;
declared fields must have the declared type (``x-kubernetes-int-or-string`` allows both, ``nullable`` allows
null), an ``enum``, ``minimum``/``maximum`` and ``required``. ``apiVersion``, ``kind`` and ``metadata`` are never
pruned. Every problem is a FieldError with its path, as upstream reports them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import FieldError

__all__ = ["prune_and_check"]

_TYPES: Mapping[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "integer": (int,),
                                          "number": (int, float), "boolean": (bool,)}
_ROOT_KEEP = ("apiVersion", "kind", "metadata")


def prune_and_check(obj: Mapping[str, Any], schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """The object with undeclared fields dropped, and every type problem found."""
    errors: list[FieldError] = []
    if not schema:
        return dict(obj), errors
    root = {k: obj[k] for k in _ROOT_KEEP if k in obj}
    rest = _walk({k: v for k, v in obj.items() if k not in _ROOT_KEEP}, schema, "", errors, root=True)
    if isinstance(rest, dict):
        root.update(rest)
    return root, errors


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(value: Any, schema: Mapping[str, Any], path: str, errors: list[FieldError], *, root: bool = False) -> Any:
    if value is None:
        if not schema.get("nullable") and path:
            errors.append(FieldError(path=path, value=None, rule=f"must be of type {schema.get('type', 'object')}"))
        return value
    stype = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        if not isinstance(value, int | str) or isinstance(value, bool):
            errors.append(FieldError(path=path, value=value, rule="must be an integer or a string"))
        return value
    expected = _TYPES.get(str(stype))
    if expected is not None and not root:
        ok = isinstance(value, expected) and not (stype in ("integer", "number") and isinstance(value, bool))
        # Times are float seconds inside (the wire codec converts them at the edge): a date-time string is one.
        ok = ok or (stype == "string" and schema.get("format") == "date-time" and isinstance(value, int | float))
        if not ok:
            errors.append(FieldError(path=path, value=value, rule=f"must be of type {stype}"))
            return value
    if "enum" in schema and value not in schema["enum"]:
        errors.append(FieldError(path=path, value=value, kind="Unsupported value",
                                 rule="supported values: " + ", ".join(f'"{v}"' for v in schema["enum"])))
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(FieldError(path=path, value=value,
                                     rule=f"should be greater than or equal to {schema['minimum']}"))
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(FieldError(path=path, value=value,
                                     rule=f"should be less than or equal to {schema['maximum']}"))
    if isinstance(value, list):
        items = schema.get("items")
        return [_walk(v, items, f"{path}[{i}]", errors) for i, v in enumerate(value)] if isinstance(
            items, Mapping) else value
    if not isinstance(value, dict):
        return value
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    out: dict[str, Any] = {}
    for key, child in value.items():
        if isinstance(props, Mapping) and key in props:
            out[key] = _walk(child, props[key], _join(path, key), errors)
        elif isinstance(additional, Mapping):
            out[key] = _walk(child, additional, _join(path, key), errors)
        elif preserve or additional is True or (props is None and additional is None and stype != "object"):
            out[key] = child
        # otherwise pruned: the API server drops fields its schema does not declare
    for key in schema.get("required") or ():
        if key not in value:
            errors.append(FieldError(path=_join(path, key), kind="Required value", rule="Required value"))
    return out
