"""A CRD's ``x-kubernetes-validations``, evaluated as kube-apiserver evaluates them, by a real CEL implementation.

The runtime is ``cel-expr-python``, Python bindings of Google's cel-cpp (the C++ reference implementation). Three
PyPI candidates were measured on 24 Kubernetes-style expressions (``has``, ``all``/``exists``/``exists_one``/``map``,
``matches``, ``type(x) == int``, ``int()``/``string()``, ``self == oldSelf`` over nested maps and lists, and the
strings extension kube-apiserver offers: ``substring``, ``lastIndexOf``, ``split``, ``lowerAscii``, ``replace``):

- ``cel-expr-python`` 0.1.3 (cel-cpp): 24/24 correct; 63 us to evaluate a compiled two-comprehension rule;
- ``common-expression-language`` 0.10.0 (cel-rust): 19/24 (no strings extension); 291 us;
- ``cel-python`` 0.5.0 (pure Python): 19/24 (no strings extension); 39.9 ms.

(``bench/cel_runtimes.py`` reproduces the table; ``docs/crd.md`` has it.) Kubernetes' own libraries that cel-cpp
lacks are added from ``cel_k8s`` (lists, regex, the IP/CIDR/quantity predicates); a rule calling one that is
not there (``quantity()``, ``url()``, ...) fails to compile, and the CRD is refused with the compiler's message, as
kube-apiserver refuses a rule it cannot compile.

Semantics kept from kube-apiserver (``apiextensions-apiserver/pkg/apiserver/schema/cel``):

- ``self`` is the value at the rule's node; at the root it holds only ``metadata.name`` and ``generateName``;
- a rule that names ``oldSelf`` is a transition rule: evaluated on update only, when the old object has a value at
  the same place (correlated through object properties, map values, and ``x-kubernetes-list-type: map`` items by
  their keys);
- ratcheting (GA 1.33): on update, a rule whose value did not change is not evaluated again;
- a failed rule is an error at the node's path plus ``fieldPath``, with ``message`` (or ``messageExpression``, or
  ``failed rule: <rule>``) and the kind its ``reason`` names; an evaluation error is an Invalid error naming it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]
from cel_expr_python.ext import ext_strings  # type: ignore[import-untyped]

from rollwise.api.errors import FieldError
from rollwise.api.memo import IdentityMemo
from rollwise.apiserver.admission.cel_k8s import kubernetes_functions

__all__ = ["RULE_VARIABLES", "CelError", "check_compiles", "compile_errors", "evaluate", "rule_errors"]

_OLD_SELF = re.compile(r"\boldSelf\b")
_KINDS = {"FieldValueInvalid": "Invalid value", "FieldValueForbidden": "Forbidden",
          "FieldValueRequired": "Required value", "FieldValueDuplicate": "Duplicate value"}


class CelError(ValueError):
    """A rule that does not compile."""


RULE_VARIABLES = ("self", "oldSelf")
"""What a CRD's rule may name."""


@lru_cache(maxsize=8)
def _env(names: tuple[str, ...]) -> Any:
    return cel.NewEnv(variables=dict.fromkeys(names, cel.Type.DYN), extensions=[ext_strings.ExtStrings()],
                      functions=kubernetes_functions())


@lru_cache(maxsize=4096)
def _compiled(rule: str, names: tuple[str, ...] = RULE_VARIABLES) -> Any:
    try:
        return _env(names).compile(rule)
    except Exception as err:  # the binding raises its own status errors; every one is a compile failure
        raise CelError(str(err)) from None


def check_compiles(expression: str, names: tuple[str, ...]) -> None:
    """Raise CelError when ``expression`` does not compile with these variables."""
    _compiled(expression, names)


def evaluate(expression: str, data: Mapping[str, Any],
             names: tuple[str, ...] = RULE_VARIABLES) -> tuple[Any, str | None]:
    """(the result as plain Python, None), or (None, why it failed: compilation or evaluation)."""
    return _evaluate(expression, data, names)


def _evaluate(rule: str, data: Mapping[str, Any], names: tuple[str, ...] = RULE_VARIABLES) -> tuple[Any, str | None]:
    """(the result, None) or (None, the evaluation error)."""
    try:
        value = _compiled(rule, names).eval(data=dict(data))
    except CelError as err:
        return None, f"compilation failed: {err}"
    except Exception as err:  # a value the binding cannot convert
        return None, str(err)
    if value.type().name() in ("ERROR", "*error*"):  # the name the binding gives an evaluation error
        return None, str(value.value())
    return value.plain_value(), None


def compile_errors(schema: Mapping[str, Any], path: str) -> list[FieldError]:
    """Every rule of ``schema`` (an ``openAPIV3Schema`` at ``path``) that does not compile, as the CRD's errors."""
    errors: list[FieldError] = []
    for node, node_path in _nodes(schema, path):
        for i, rule in enumerate(node.get("x-kubernetes-validations") or ()):
            text = rule.get("rule") if isinstance(rule, Mapping) else None
            where = f"{node_path}.x-kubernetes-validations[{i}].rule"
            if not isinstance(text, str) or not text:
                errors.append(FieldError(path=where, kind="Required value", rule="a rule is required"))
                continue
            try:
                _compiled(text)
            except CelError as err:
                errors.append(FieldError(path=where, value=text, rule=f"compilation failed: {err}"))
    return errors


def _nodes(schema: Mapping[str, Any], path: str) -> Iterator[tuple[Mapping[str, Any], str]]:
    yield schema, path
    for key in ("properties",):
        for name, child in (schema.get(key) or {}).items():
            if isinstance(child, Mapping):
                yield from _nodes(child, f"{path}.properties[{name}]")
    for key in ("items", "additionalProperties"):
        child = schema.get(key)
        if isinstance(child, Mapping):
            yield from _nodes(child, f"{path}.{key}")


def rule_errors(obj: Mapping[str, Any], old: Mapping[str, Any] | None, schema: Mapping[str, Any]) -> list[FieldError]:
    """Every failed ``x-kubernetes-validations`` rule of a custom resource (already pruned, defaulted and valid
    against the schema's types), ``old`` being the stored object on an update.

    The walk goes over the objects as they are and builds what CEL sees (``_view``) only where a rule runs. A part
    equal to the stored object's gives the errors the stored part alone gives (ratcheting skips its plain rules,
    and a transition rule sees the same value twice), so those are memoised on the stored part's identity: a status
    write, whose spec is the stored one, evaluates no spec rule again."""
    errors: list[FieldError] = []
    _walk(_root_view(obj), None if old is None else _root_view(old), schema, "", errors)
    return errors


def _view(value: Any, schema: Mapping[str, Any]) -> Any:
    """What CEL sees of a value: only what the schema declares. Fields kept by ``x-kubernetes-preserve-unknown-
    fields`` are not accessible to rules in kube-apiserver (not even to ``==``), and neither are they here."""
    if isinstance(value, Mapping):
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        out = {}
        for key, child in value.items():
            child_schema = (props or {}).get(key) if isinstance(props, Mapping) and key in props else additional
            if isinstance(child_schema, Mapping):
                out[key] = _view(child, child_schema)
            elif key == "metadata" and props is not None and "metadata" not in props:
                out[key] = child  # the root's name and generateName (``_root_view``)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_view(item, schema["items"]) for item in value]
    return value


def _root_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a root rule sees: the object with ``metadata`` cut to ``name`` and ``generateName``."""
    raw = obj.get("metadata")
    meta: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    out = {k: v for k, v in obj.items() if k != "metadata"}
    out["metadata"] = {k: meta[k] for k in ("name", "generateName") if k in meta}
    return out


_MISSING = object()
_UNCHANGED: IdentityMemo[tuple[FieldError, ...]] = IdentityMemo(limit=1024)
"""Errors of a stored part against itself, by (the part, its schema node) identity and the path."""


def _walk(value: Any, old: Any, schema: Mapping[str, Any], path: str, errors: list[FieldError]) -> None:
    if path and old is not None and isinstance(old, Mapping | list) and (value is old or value == old):
        # (not at the root: ``_root_view`` makes a new one per call, so only the stored parts below can be keys)
        errors.extend(_UNCHANGED.cached((old, schema), path, lambda: _walked_unchanged(old, schema, path)))
        return
    if schema.get("x-kubernetes-validations"):
        _judge(schema, _view(value, schema), None if old is None else _view(old, schema), path, errors)
    if isinstance(value, Mapping):
        for key, child, child_schema in _declared(value, schema):
            old_child = old.get(key, _MISSING) if isinstance(old, Mapping) else _MISSING
            _walk(child, None if old_child is _MISSING else old_child, child_schema, _join(path, key), errors)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        olds = _correlated(value, old, schema)
        for i, item in enumerate(value):
            _walk(item, olds[i], schema["items"], f"{path}[{i}]", errors)


def _judge(schema: Mapping[str, Any], seen: Any, was: Any, path: str, errors: list[FieldError]) -> None:
    """Run the node's rules on what CEL sees of the value (``seen``) and of its old self (``was``)."""
    for rule in schema.get("x-kubernetes-validations") or ():
        if isinstance(rule, Mapping):
            error = _check(rule, seen, was, schema, path)
            if error is not None:
                errors.append(error)


def _declared(value: Mapping[str, Any], schema: Mapping[str, Any]) -> Iterator[tuple[str, Any, Mapping[str, Any]]]:
    """The fields of ``value`` the schema declares, each with its schema node (the others are invisible to CEL)."""
    props = schema.get("properties") or {}
    additional = schema.get("additionalProperties")
    for key, child in value.items():
        child_schema = props.get(key) if key in props else additional if isinstance(additional, Mapping) else None
        if isinstance(child_schema, Mapping):
            yield key, child, child_schema


def _walked_unchanged(value: Any, schema: Mapping[str, Any], path: str) -> tuple[FieldError, ...]:
    errors: list[FieldError] = []
    _walk_unchanged(value, schema, path, errors)
    return tuple(errors)


def _walk_unchanged(value: Any, schema: Mapping[str, Any], path: str, errors: list[FieldError]) -> None:
    """``_walk`` of a part against itself, without asking again whether it changed: each item of a ``map`` or
    ``set`` list is its own old self, an atomic list's items have none (``_correlated``)."""
    if schema.get("x-kubernetes-validations"):
        seen = _view(value, schema)
        _judge(schema, seen, seen, path, errors)
    if isinstance(value, Mapping):
        for key, child, child_schema in _declared(value, schema):
            _walk_unchanged(child, child_schema, _join(path, key), errors)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        correlated = schema.get("x-kubernetes-list-type") in ("map", "set")
        for i, item in enumerate(value):
            if correlated:
                _walk_unchanged(item, schema["items"], f"{path}[{i}]", errors)
            else:
                _walk(item, None, schema["items"], f"{path}[{i}]", errors)


def _correlated(items: list[Any], old: Any, schema: Mapping[str, Any]) -> list[Any]:
    """Each item's old self: by key for ``x-kubernetes-list-type: map``, by value for ``set``, none for atomic."""
    if not isinstance(old, list):
        return [None] * len(items)
    kind = schema.get("x-kubernetes-list-type")
    if kind == "map":
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())

        def key_of(item: Any) -> Any:
            return tuple(item.get(k) for k in keys) if isinstance(item, Mapping) else None
        by_key = {key_of(o): o for o in old}
        return [by_key.get(key_of(item)) for item in items]
    if kind == "set":  # equal as CEL sees them: a field the schema does not declare makes no difference
        item_schema = schema.get("items") or {}
        seen = [(_view(o, item_schema), o) for o in old]
        return [next((o for view, o in seen if view == _view(item, item_schema)), None) for item in items]
    return [None] * len(items)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check(rule: Mapping[str, Any], value: Any, old: Any, schema: Mapping[str, Any],
           path: str) -> FieldError | None:
    text = str(rule.get("rule") or "")
    transition = bool(_OLD_SELF.search(text))
    if transition and old is None:
        return None  # a transition rule runs on update only, where the old object has this value
    if not transition and old is not None and old == value:
        return None  # ratcheting: an unchanged value is not judged again
    data = {"self": value, **({"oldSelf": old} if transition else {})}
    result, failure = _evaluate(text, data)
    where = path + str(rule.get("fieldPath") or "") if rule.get("fieldPath") else path
    where = where.lstrip(".")
    if failure is not None:
        return FieldError(path=where, value=_type_name(schema), rule=f"rule evaluation error: {failure}")
    if result is True:
        return None
    message = str(rule.get("message") or f"failed rule: {text}")
    if rule.get("messageExpression"):
        custom, _ = _evaluate(str(rule["messageExpression"]), data)
        if isinstance(custom, str) and custom.strip():
            message = custom
    kind = _KINDS.get(str(rule.get("reason") or "FieldValueInvalid"), "Invalid value")
    return FieldError(path=where, kind=kind, value=_type_name(schema) if kind in ("Invalid value",
                                                                                "Duplicate value") else None,
                      rule=message)


def _type_name(schema: Mapping[str, Any]) -> str:
    """kube-apiserver shows a failed rule's value as the schema's type name ("object", "string")."""
    if schema.get("x-kubernetes-int-or-string"):
        return "integer-or-string"
    return str(schema.get("type") or "object")
