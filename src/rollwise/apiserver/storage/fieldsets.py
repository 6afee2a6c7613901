"""Field sets, as structured-merge-diff (the library behind server-side apply) has them: which fields of an object a
manager set, as paths, and their ``FieldsV1`` form in ``metadata.managedFields``.

A path is a tuple of ``FieldsV1`` keys: ``f:<field>`` for a map's field, ``k:<json>`` for an item of a list keyed
by some of its fields (containers by ``name``), ``v:<json>`` for an item of a set of values (finalizers). A set
holds the leaves a manager set and the list items themselves (FieldsV1's ``"."``). A list's type comes from a
CRD's schema (``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``) or, for the built-in kinds, from the
patch merge keys of their Go types (``smp.MERGE_KEYS``); any other list is atomic, a leaf as a whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.apiserver.storage.smp import MERGE_KEYS, SET_LISTS

__all__ = ["FieldSet", "ListTypes", "Path", "delete_at", "fields_of", "from_fields_v1", "key_values", "to_fields_v1",
           "value_at"]

Path = tuple[str, ...]
FieldSet = frozenset[Path]
_MISSING = object()
# Fields no manager owns: identity and bookkeeping the server writes (upstream's reset and ignored fields).
_IGNORED = {("f:apiVersion",), ("f:kind",), ("f:metadata", "f:name"), ("f:metadata", "f:namespace"),
            ("f:metadata", "f:uid"), ("f:metadata", "f:resourceVersion"), ("f:metadata", "f:generation"),
            ("f:metadata", "f:creationTimestamp"), ("f:metadata", "f:managedFields"),
            ("f:metadata", "f:deletionTimestamp"), ("f:metadata", "f:selfLink"), ("f:metadata", "f:generateName")}
# Keyed lists whose key has more than one field in structured-merge-diff (ports are unique per protocol).
_MULTI_KEYS = {"ports": ("containerPort", "protocol"), "spec.ports": ("port", "protocol")}


@dataclass(frozen=True, slots=True)
class ListTypes:
    """How to key the lists of one resource: its CRD schema, or None for a built-in kind."""

    schema: Mapping[str, Any] | None = None

    def keys(self, names: tuple[str, ...], schema: Mapping[str, Any] | None) -> tuple[str, ...] | None:
        """The key fields of the list at ``names`` (field names from the root); ``()`` for a set, None: atomic."""
        if self.schema is not None:
            kind = (schema or {}).get("x-kubernetes-list-type")
            if kind == "map":
                return tuple((schema or {}).get("x-kubernetes-list-map-keys") or ())
            return () if kind == "set" else None
        field = names[-1]
        if field in SET_LISTS:
            return ()
        parent = names[-2] if len(names) > 1 else ""
        if field == "ports":
            return _MULTI_KEYS["spec.ports" if parent == "spec" else "ports"]
        key = MERGE_KEYS.get((parent, field)) or MERGE_KEYS.get(("", field))
        return (key,) if key else None

    def child(self, schema: Mapping[str, Any] | None, name: str) -> Mapping[str, Any] | None:
        if schema is None:
            return None
        props = schema.get("properties") or {}
        if name in props:
            return props[name]  # type: ignore[no-any-return]
        extra = schema.get("additionalProperties")
        return extra if isinstance(extra, Mapping) else None

    def root(self) -> Mapping[str, Any] | None:
        return self.schema


# What structured-merge-diff reads for a key field an item leaves out: the field's default in the schema (a port's
# protocol is TCP), so an applied port without a protocol is the live one the server defaulted to TCP.
_KEY_DEFAULTS = {"protocol": "TCP"}


def key_values(item: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The key fields of a list item, each the item's own or its default; a key with neither is left out."""
    out = {}
    for k in sorted(keys):
        if k in item:
            out[k] = item[k]
        elif k in _KEY_DEFAULTS:
            out[k] = _KEY_DEFAULTS[k]
    return out


def _item_key(item: Any, keys: tuple[str, ...]) -> str:
    if not keys:
        return "v:" + json.dumps(item, separators=(",", ":"), sort_keys=True)
    if not isinstance(item, Mapping):
        return "v:" + json.dumps(item, separators=(",", ":"), sort_keys=True)
    return "k:" + json.dumps(key_values(item, keys), separators=(",", ":"))


def _walk(value: Any, types: ListTypes, schema: Mapping[str, Any] | None, names: tuple[str, ...],
          prefix: Path) -> Iterator[Path]:
    if isinstance(value, Mapping) and value:
        for name, child in value.items():
            path = (*prefix, f"f:{name}")
            if path in _IGNORED:
                continue
            yield from _walk(child, types, types.child(schema, name), (*names, name), path)
    elif isinstance(value, list) and names:
        item_schema = (schema or {}).get("items") if schema is not None else None
        keys = types.keys(names, schema)
        if keys is None:
            yield prefix
            return
        for item in value:
            path = (*prefix, _item_key(item, keys))
            yield path
            if keys and isinstance(item, Mapping):
                yield from _walk(item, types, item_schema, names, path)
    else:
        yield prefix


def fields_of(obj: Mapping[str, Any], types: ListTypes, *, skip: str = "status") -> FieldSet:
    """Every field ``obj`` sets, as paths; ``skip`` is the top-level field a write does not own (``status`` for
    the main resource, ``spec`` for the status subresource)."""
    body = {k: v for k, v in obj.items() if k != skip}
    return frozenset(p for p in _walk(body, types, types.root(), (), ()) if p)


def _step(value: Any, key: str) -> Any:
    if key.startswith("f:"):
        return value.get(key[2:], _MISSING) if isinstance(value, Mapping) else _MISSING
    if not isinstance(value, list):
        return _MISSING
    for item in value:
        if key.startswith("v:") and json.dumps(item, separators=(",", ":"), sort_keys=True) == key[2:]:
            return item
        if key.startswith("k:") and isinstance(item, Mapping):
            wanted = json.loads(key[2:])
            if key_values(item, tuple(wanted)) == wanted:  # a key field left out is its default, as when keyed
                return item
    return _MISSING


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path``, or a sentinel that equals nothing else when it is absent."""
    value = obj
    for key in path:
        value = _step(value, key)
        if value is _MISSING:
            return _MISSING
    return value


def delete_at(obj: Any, path: Path) -> None:
    """Remove the field or list item at ``path`` (in place); a map or list left empty by it goes too, as a real
    server drops a field whose last owned entry is gone."""
    if not path:
        return
    parent = value_at(obj, path[:-1]) if len(path) > 1 else obj
    key = path[-1]
    if isinstance(parent, dict) and key.startswith("f:"):
        parent.pop(key[2:], None)
    elif isinstance(parent, list):
        item = _step(parent, key)
        if item is not _MISSING:
            parent.remove(item)
    else:
        return
    if len(path) > 1 and not parent and path[-2].startswith("f:"):
        delete_at(obj, path[:-1])


def to_fields_v1(fields: FieldSet) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(fields):
        node = tree
        for key in path:
            node = node.setdefault(key, {})
    for path in fields:  # a list item that has fields of its own marks itself with "."
        node = tree
        for key in path:
            node = node[key]
        if node and not path[-1].startswith("f:"):
            node["."] = {}
    return tree


def from_fields_v1(tree: Mapping[str, Any], prefix: Path = ()) -> FieldSet:
    out: set[Path] = set()
    for key, child in tree.items():
        if key == ".":
            out.add(prefix)
            continue
        path = (*prefix, key)
        if isinstance(child, Mapping) and child:
            out |= from_fields_v1(child, path)
            if not key.startswith("f:"):
                out.add(path)
        else:
            out.add(path)
    return frozenset(out)
