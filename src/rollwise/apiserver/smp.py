"""Strategic merge patch (``application/strategic-merge-patch+json``) for the built-in kinds.

Upstream's rules (``k8s.io/apimachinery/pkg/util/strategicpatch/patch.go``), driven by a merge-key table instead
of Go struct tags:

- maps merge recursively; ``null`` deletes a key;
- a list whose field has a merge key (``containers`` by ``name``...) merges element by element on that key; an
  element ``{"<key>": k, "$patch": "delete"}`` removes the element, and an element ``{"$patch": "replace"}`` makes
  the other patch elements replace the whole list;
- a list of scalars with the merge strategy (``finalizers``) is a union; ``$deleteFromPrimitiveList/<field>``
  removes values from it;
- every other list is replaced;
- ``$patch: replace`` in a map replaces the map, ``$patch: delete`` deletes it, ``$patch: merge`` is the default;
- ``$retainKeys`` keeps only the listed keys of the merged map (upstream's ``retainKeys`` strategy);
- ``$setElementOrder/<field>`` orders the merged list as given; elements only the server has keep their relative
  order after the ordered ones.

The table lists the fields of the kinds rollwise serves with behaviour (pods, StatefulSets, services, PVCs, the
metadata every object has); fields absent from it are treated as atomic lists, as upstream does for fields
without a ``patchStrategy``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.values import clone

__all__ = ["MERGE_KEYS", "SET_LISTS", "PatchError", "strategic_merge"]


class PatchError(ValueError):
    """A patch that cannot be applied (HTTP 422 from the API server, with this message)."""


# (parent field, field) -> merge key; parent "" matches any parent. Sources: the patchMergeKey tags in
# k8s.io/api core/v1 and apps/v1 types.go.
MERGE_KEYS: Mapping[tuple[str, str], str] = {
    ("", "containers"): "name",
    ("", "initContainers"): "name",
    ("", "ephemeralContainers"): "name",
    ("", "volumes"): "name",
    ("", "env"): "name",
    ("", "imagePullSecrets"): "name",
    ("", "resourceClaims"): "name",
    ("", "schedulingGates"): "name",
    ("", "volumeMounts"): "mountPath",
    ("", "volumeDevices"): "devicePath",
    ("", "conditions"): "type",
    ("", "ownerReferences"): "uid",
    ("", "hostAliases"): "ip",
    ("", "topologySpreadConstraints"): "topologyKey",
    ("", "containerStatuses"): "name",
    ("", "initContainerStatuses"): "name",
    ("", "podIPs"): "ip",
    ("", "gates"): "name",
    ("containers", "ports"): "containerPort",
    ("initContainers", "ports"): "containerPort",
    ("ephemeralContainers", "ports"): "containerPort",
    ("spec", "ports"): "port",  # Service
}
# Lists of scalars with patchStrategy=merge.
SET_LISTS = frozenset({"finalizers"})

_DIRECTIVE = "$patch"
_RETAIN = "$retainKeys"
_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"
_DELETE = object()


def _merge_key(parent: str, field: str) -> str | None:
    return MERGE_KEYS.get((parent, field)) or MERGE_KEYS.get(("", field))


def strategic_merge(original: Any, patch: Any) -> Any:
    """The result of applying ``patch`` to ``original`` (neither is changed). Raises PatchError."""
    if not isinstance(patch, Mapping):
        raise PatchError("a strategic merge patch must be a JSON object")
    out = _merge_map(original if isinstance(original, Mapping) else {}, patch, parent="")
    return {} if out is _DELETE else out


def _merge_map(original: Mapping[str, Any], patch: Mapping[str, Any], *, parent: str) -> Any:
    directive = patch.get(_DIRECTIVE)
    if directive == "delete":
        return _DELETE
    if directive == "replace":
        return _strip({k: v for k, v in patch.items() if k != _DIRECTIVE})
    if directive not in (None, "merge"):
        raise PatchError(f"Unknown patch type: {directive}")
    result = dict(original)
    orders: dict[str, list[Any]] = {}
    retain = patch.get(_RETAIN)
    for key, value in patch.items():
        if key in (_DIRECTIVE, _RETAIN):
            continue
        if key.startswith(_ORDER):
            if not isinstance(value, list):
                raise PatchError(f"{key} must be a list")
            orders[key[len(_ORDER):]] = value
            continue
        if key.startswith(_DELETE_PRIMITIVE):
            field = key[len(_DELETE_PRIMITIVE):]
            if not isinstance(value, list):
                raise PatchError(f"{key} must be a list")
            current = result.get(field)
            if isinstance(current, list):
                result[field] = [v for v in current if v not in value]
            continue
        if value is None:
            result.pop(key, None)
            continue
        merged = _merge_value(result.get(key), value, parent=parent, field=key)
        if merged is _DELETE:
            result.pop(key, None)
        else:
            result[key] = merged
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _ordered(result[field], order, _merge_key(parent, field))
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError("$retainKeys must be a list")
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_value(original: Any, value: Any, *, parent: str, field: str) -> Any:
    if isinstance(value, Mapping):
        return _merge_map(original if isinstance(original, Mapping) else {}, value, parent=field)
    if isinstance(value, list):
        key = _merge_key(parent, field)
        if key is not None:
            return _merge_list(original if isinstance(original, list) else [], value, key=key, field=field)
        if field in SET_LISTS:
            base = list(original) if isinstance(original, list) else []
            return base + [v for v in value if v not in base]
        if any(isinstance(v, Mapping) and _DIRECTIVE in v for v in value):
            return _strip([v for v in value if not (isinstance(v, Mapping) and _DIRECTIVE in v)])
        return clone(value)
    return value


def _merge_list(original: list[Any], patch: list[Any], *, key: str, field: str) -> list[Any]:
    if any(isinstance(v, Mapping) and v.get(_DIRECTIVE) == "replace" and key not in v for v in patch):
        kept: list[Any] = _strip([v for v in patch
                                  if not (isinstance(v, Mapping) and _DIRECTIVE in v and key not in v)])
        return kept
    result = list(original)
    for item in patch:
        if not isinstance(item, Mapping):
            raise PatchError(f"{field}: elements must be objects with the merge key {key!r}")
        if key not in item:
            raise PatchError(f"map: {dict(item)} does not contain declared merge key: {key}")
        index = next((i for i, v in enumerate(result) if isinstance(v, Mapping) and v.get(key) == item[key]), None)
        if item.get(_DIRECTIVE) == "delete":
            if index is not None:
                del result[index]
            continue
        if index is None:
            result.append(_strip({k: v for k, v in item.items() if k != _DIRECTIVE}))
        else:
            merged = _merge_map(result[index], item, parent=field)
            result[index] = merged
    return result


def _ordered(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    """Items in ``order`` first, in that order; the rest keep their relative order after them."""
    def ident(v: Any) -> Any:
        return v.get(key) if key is not None and isinstance(v, Mapping) else v

    wanted = [ident(o) for o in order]
    rank = {w: i for i, w in enumerate(wanted) if isinstance(w, str | int | float)}
    ranked = sorted((v for v in items if ident(v) in rank), key=lambda v: rank[ident(v)])
    rest = [v for v in items if ident(v) not in rank]
    return ranked + rest


def _strip(value: Any) -> Any:
    """A copy without directives (a replaced map or list may still carry nested ones)."""
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items()
                if k not in (_DIRECTIVE, _RETAIN) and not k.startswith((_ORDER, _DELETE_PRIMITIVE))}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
