"""OpenAPI v3 schemas of the built-in kinds, with every field's type and description, built from the Kubernetes API
types lightkube ships (``lightkube.models``, generated from the upstream OpenAPI document of the release it names).
``kubectl explain statefulset.spec.updateStrategy`` reads them (through ``/openapi/v3/apis/apps/v1``), as it reads
kube-apiserver's.

Each model becomes a component schema named as upstream names it (``io.k8s.api.apps.v1.StatefulSetSpec``,
``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``); a field of a model type refers to it (``allOf`` around a
``$ref``, as upstream's v3 documents do); an int-or-string is ``x-kubernetes-int-or-string``; a time is a
``date-time`` string. A group-version document carries the schemas its kinds reach, as upstream's do.
"""

from __future__ import annotations

import datetime
import functools
import importlib
import re
import typing
from collections.abc import Iterable
from typing import Any

__all__ = ["kind_schemas", "model_for"]

_PREFIXES = {"meta_v1": "io.k8s.apimachinery.pkg.apis.meta.v1", "runtime": "io.k8s.apimachinery.pkg.runtime",
             "util_intstr": "io.k8s.apimachinery.pkg.util.intstr", "version": "io.k8s.apimachinery.pkg.version",
             "resource": "io.k8s.apimachinery.pkg.api.resource",
             "apiextensions_v1": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
             "apiregistration_v1": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1"}
_PARAMETER = re.compile(r"^\s*\* \*\*(\w+)\*\* ``[^`]*`` - (.*)$")


def model_for(group: str, version: str, kind: str) -> type | None:
    """The lightkube model of a built-in kind (``apps``, ``v1``, ``StatefulSet``), or None."""
    module = f"{group.split('.', maxsplit=1)[0] if group else 'core'}_{version}"
    try:
        found = importlib.import_module(f"lightkube.models.{module}")
    except ImportError:
        return None
    model = getattr(found, kind, None)
    return model if isinstance(model, type) and _is_model(model) else None


def _is_model(value: object) -> bool:
    return isinstance(value, type) and value.__module__.startswith("lightkube.models.")


def _name(model: type) -> str:
    module = model.__module__.rsplit(".", 1)[-1]
    prefix = _PREFIXES.get(module) or "io.k8s.api." + module.replace("_", ".")
    return f"{prefix}.{model.__name__}"


def _described(model: type) -> tuple[str, dict[str, str]]:
    """The model's description and each field's, from its docstring (``**parameters**`` then ``* **f** ...``)."""
    head, _, listed = (model.__doc__ or "").partition("**parameters**")
    description = " ".join(line.strip() for line in head.splitlines() if line.strip())
    fields: dict[str, str] = {}
    current = None
    for line in listed.splitlines():
        match = _PARAMETER.match(line)
        if match:
            current = match.group(1)
            fields[current] = match.group(2).strip()
        elif current is not None and line.strip():
            fields[current] += " " + line.strip()
    return description, fields


def _type(hint: Any, reached: list[type]) -> dict[str, Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        rest = [a for a in args if a is not type(None)]
        if set(rest) == {int, str}:
            return {"x-kubernetes-int-or-string": True}
        return _type(rest[0], reached) if len(rest) == 1 else {"type": "object",
                                                                "x-kubernetes-preserve-unknown-fields": True}
    if origin is list:
        return {"type": "array", "items": _type(args[0] if args else object, reached)}
    if origin is dict or hint is dict:
        values = _type(args[1], reached) if len(args) == 2 else {}
        return {"type": "object", "additionalProperties": values} if values else {"type": "object"}
    if _is_model(hint):
        reached.append(hint)
        return {"$ref": f"#/components/schemas/{_name(hint)}"}
    simple = {str: {"type": "string"}, int: {"type": "integer", "format": "int64"}, bool: {"type": "boolean"},
              float: {"type": "number", "format": "double"},
              datetime.datetime: {"type": "string", "format": "date-time"}}
    # Anything else (a JSON value of any shape) is what upstream marks as keeping unknown fields.
    return dict(simple.get(hint, {"type": "object", "x-kubernetes-preserve-unknown-fields": True}))


@functools.cache
def _schema(model: type) -> tuple[dict[str, Any], tuple[type, ...]]:
    """(the model's schema, the models its fields refer to)."""
    description, fields = _described(model)
    hints = typing.get_type_hints(model)
    reached: list[type] = []
    properties: dict[str, Any] = {}
    required = []
    for name, hint in hints.items():
        if typing.get_origin(hint) is not typing.Union or type(None) not in typing.get_args(hint):
            required.append(name)
        field = _type(hint, reached)
        if "$ref" in field:
            field = {"allOf": [field]}
        if fields.get(name):
            field["description"] = fields[name]
        properties[name] = field
    schema: dict[str, Any] = {"description": description, "type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, tuple(reached)


def kind_schemas(kinds: Iterable[tuple[str, str, str]]) -> dict[str, dict[str, Any]]:
    """Component schemas for the built-in kinds (group, version, kind) and every model they reach; each kind's own
    schema names its group-version-kind. Kinds lightkube does not know are left out."""
    out: dict[str, dict[str, Any]] = {}
    todo: list[type] = []
    for group, version, kind in kinds:
        model = model_for(group, version, kind)
        if model is None:
            continue
        schema, reached = _schema(model)
        out[_name(model)] = {**schema, "x-kubernetes-group-version-kind": [
            {"group": group, "version": version, "kind": kind}]}
        todo.extend(reached)
    while todo:
        model = todo.pop()
        name = _name(model)
        if name in out:
            continue
        schema, reached = _schema(model)
        out[name] = schema
        todo.extend(reached)
    return out
