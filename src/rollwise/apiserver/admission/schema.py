"""Custom resources against their CRD's ``openAPIV3Schema``: pruning, defaulting, type checks, then CEL rules.

What a real API server does to a custom resource before storing it, so that a test passing here would pass there:
fields the schema does not declare are dropped (pruning) unless a node says ``x-kubernetes-preserve-unknown-fields``;
a missing field with a ``default`` gets it (and the default is walked like any value); declared fields must have
the declared type (``x-kubernetes-int-or-string`` allows both, ``nullable`` allows null), an ``enum``,
``minimum``/``maximum``, ``minLength``/``maxLength``/``pattern``, ``minItems``/``maxItems``, ``maxProperties`` and
``required``; items of an ``x-kubernetes-list-type: map`` or ``set`` list are unique. ``apiVersion``, ``kind`` and
``metadata`` are never pruned. Then, when the types hold, the ``x-kubernetes-validations`` rules run
(``cel_rules``). Every problem is a FieldError with its path, as upstream reports them.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.memo import IdentityMemo
from rollwise.apiserver.admission.cel_rules import rule_errors

__all__ = ["admit_custom", "prune_and_check", "pruned_fields"]

_TYPES: Mapping[str, tuple[type, ...]] = {"object": (dict,), "array": (list,), "string": (str,), "integer": (int,),
                                          "number": (int, float), "boolean": (bool,)}
_ROOT_KEEP = ("apiVersion", "kind", "metadata")
_PRUNED = "pruned"


def admit_custom(obj: Mapping[str, Any], old: Mapping[str, Any] | None,
                 schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """A custom resource as kube-apiserver stores it (pruned, defaulted) and every problem its CRD finds: the
    schema's, then, if the types hold, the CEL rules' (with ``old`` for transition rules and ratcheting)."""
    out, errors = prune_and_check(obj, schema, old)
    if errors or not schema:
        return out, errors
    return out, rule_errors(out, old, schema)


def prune_and_check(obj: Mapping[str, Any], schema: Mapping[str, Any], old: Mapping[str, Any] | None = None,
                    ) -> tuple[dict[str, Any], list[FieldError]]:
    """The object with undeclared fields dropped and defaults filled in, and every schema problem found (``old``:
    the stored object on an update, whose unchanged parts need no second walk)."""
    errors: list[FieldError] = []
    if not schema:
        return dict(obj), errors
    out, found = _pruned(obj, schema, old)
    return out, [e for e in found if e.kind != _PRUNED]


def pruned_fields(obj: Mapping[str, Any], schema: Mapping[str, Any],
                  old: Mapping[str, Any] | None = None) -> list[FieldError]:
    """The fields of ``obj`` (an object or a merge patch) its schema would prune: what ``fieldValidation`` calls
    unknown fields for a custom resource (``old``: the object stored under its name, if any: a part equal to its
    own gives what its own gives)."""
    return [e for e in _pruned(obj, schema, old)[1] if e.kind == _PRUNED] if schema else []


def _pruned(obj: Mapping[str, Any], schema: Mapping[str, Any],
            old: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], list[FieldError]]:
    errors: list[FieldError] = []
    root = {k: obj[k] for k in _ROOT_KEEP if k in obj}
    _check_meta(root.get("metadata"), schema, errors)
    rest = {k: v for k, v in obj.items() if k not in _ROOT_KEEP}
    kept = {k: v for k, v in rest.items() if old is not None and _unchanged_and_kept(k, v, old, schema)}
    _check_scalar(rest, schema, "", errors)
    walked = _walk_object(rest, schema, "", errors, schema.get("type"), kept=kept)
    root.update(walked)
    return root, errors


_KEPT: IdentityMemo[bool] = IdentityMemo(limit=1024)
"""Whether a stored part comes out of its schema node as it is (nothing pruned or defaulted, no error)."""


def _unchanged_and_kept(key: str, value: Any, old: Mapping[str, Any], schema: Mapping[str, Any]) -> bool:
    """``value`` (at the root's ``key``) equals the stored object's, which the schema keeps as it is: the walk would
    give it back unchanged and find nothing. A stored object met a schema that may have changed since (a CRD
    update), so that is asked of the stored part under today's schema, once per stored part."""
    stored = old.get(key)
    node = (schema.get("properties") or {}).get(key)
    if stored is None or not isinstance(node, Mapping) or not (value is stored or value == stored):
        return False
    return _KEPT.cached((stored, node), key, lambda: _kept_as_is(stored, node, key))


def _kept_as_is(value: Any, schema: Mapping[str, Any], path: str) -> bool:
    errors: list[FieldError] = []
    return _walk(value, schema, path, errors) == value and not errors


def _check_meta(meta: Any, schema: Mapping[str, Any], errors: list[FieldError]) -> None:
    """``metadata`` is never pruned, but a schema may restrict its ``name`` and ``generateName``."""
    props = ((schema.get("properties") or {}).get("metadata") or {}).get("properties") or {}
    if not isinstance(meta, Mapping):
        return
    for key in ("name", "generateName"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            # kube-apiserver's decoder refuses it before any schema is read
            errors.append(FieldError(path=f"metadata.{key}", value=meta[key], rule="must be of type string"))
        elif isinstance(meta.get(key), str) and isinstance(props.get(key), Mapping):
            _check_scalar(meta[key], props[key], f"metadata.{key}", errors)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@lru_cache(maxsize=512)
def _pattern(text: str) -> re.Pattern[str] | None:
    # Go's `$` (no multiline flag) is the end of the text; Python's also matches before a final newline.
    if text.endswith("$") and not text.endswith("\\$"):
        text = text[:-1] + r"\Z"
    try:
        return re.compile(text)
    except re.error:
        return None


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
        _check_scalar(value, schema, path, errors)
        return value
    expected = _TYPES.get(str(stype))
    if expected is not None and not root:
        ok = isinstance(value, expected) and not (stype in ("integer", "number") and isinstance(value, bool))
        # Times are float seconds inside (the wire codec converts them at the edge): a date-time string is one.
        ok = ok or (stype == "string" and schema.get("format") == "date-time" and isinstance(value, int | float))
        if not ok:
            errors.append(FieldError(path=path, value=value, rule=f"must be of type {stype}"))
            return value
    _check_scalar(value, schema, path, errors)
    if isinstance(value, list):
        return _walk_list(value, schema, path, errors)
    if not isinstance(value, dict):
        return value
    return _walk_object(value, schema, path, errors, stype)


def _check_scalar(value: Any, schema: Mapping[str, Any], path: str, errors: list[FieldError]) -> None:
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
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(FieldError(path=path, kind="Too long", value=value,
                                     rule=f"may not be more than {schema['maxLength']} bytes"))
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(FieldError(path=path, value=value,
                                     rule=f"should be at least {schema['minLength']} chars long"))
        pattern = _pattern(str(schema["pattern"])) if "pattern" in schema else None
        if pattern is not None and not pattern.search(value):
            errors.append(FieldError(path=path, value=value, rule=f"should match '{schema['pattern']}'"))


def _walk_list(value: list[Any], schema: Mapping[str, Any], path: str, errors: list[FieldError]) -> list[Any]:
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(FieldError(path=path, kind="Too many", value=len(value),
                                 rule=f"must have at most {schema['maxItems']} items"))
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(FieldError(path=path, value=len(value), rule=f"should have at least {schema['minItems']} "
                                                                   "items"))
    items = schema.get("items")
    out = [_walk(v, items, f"{path}[{i}]", errors) for i, v in enumerate(value)] if isinstance(
        items, Mapping) else value
    kind = schema.get("x-kubernetes-list-type")
    keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
    seen: list[Any] = []
    for i, item in enumerate(out):
        key = tuple(item.get(k) for k in keys) if kind == "map" and isinstance(item, Mapping) else item
        if kind in ("map", "set") and key in seen:
            shown = ({k: item.get(k) for k in keys} if kind == "map" and isinstance(item, Mapping) else item)
            errors.append(FieldError(path=f"{path}[{i}]", kind="Duplicate value", value=shown,
                                     rule="duplicate entries"))
        seen.append(key)
    return out


def _walk_object(value: dict[str, Any], schema: Mapping[str, Any], path: str, errors: list[FieldError],
                 stype: Any, kept: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``kept``: children already known to come out as they are (``_unchanged_and_kept``)."""
    props = schema.get("properties")
    additional = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        errors.append(FieldError(path=path, kind="Too many", value=len(value),
                                 rule=f"must have at most {schema['maxProperties']} items"))
    out: dict[str, Any] = {}
    for key, child in value.items():
        if kept and key in kept:
            out[key] = child
        elif isinstance(props, Mapping) and key in props:
            out[key] = _walk(child, props[key], _join(path, key), errors)
        elif isinstance(additional, Mapping):
            out[key] = _walk(child, additional, _join(path, key), errors)
        elif preserve or additional is True or (props is None and additional is None and stype != "object"):
            out[key] = child
        else:  # pruned: the API server drops fields its schema does not declare (noted for fieldValidation)
            errors.append(FieldError(path=_join(path, key), kind=_PRUNED, value=key, rule="unknown field"))
    if isinstance(props, Mapping):
        for key, child_schema in props.items():
            if key not in out and isinstance(child_schema, Mapping) and "default" in child_schema:
                # defaults are applied when a field is absent, then pruned and validated like any value
                out[key] = _walk(copy.deepcopy(child_schema["default"]), child_schema, _join(path, key), errors)
    for key in schema.get("required") or ():
        if key not in out:
            errors.append(FieldError(path=_join(path, key), kind="Required value", rule="Required value"))
    return out
