"""Strategic merge patch (``application/strategic-merge-patch+json``) for the built-in kinds.

Upstream's rules (``k8s.io/apimachinery/pkg/util/strategicpatch/patch.go``), driven by a merge-key table instead
of Go struct tags:

- maps merge recursively; ``null`` deletes a key;
- a list whose field has a merge key (``containers`` by ``name``...) merges element by element on that key; an
  element ``{"<key>": k, "$patch": "delete"}`` removes the element, and an element ``{"$patch": "replace"}`` makes
  the other patch elements replace the whole list;
- a list of scalars with the merge strategy (``finalizers``) is a union; ``$deleteFromPrimitiveList/<field>``
  removes values from it;
- a merged list is ordered as upstream orders it (mergeSlice, normalizeElementOrder, mergeSortedSlice): the
  patch's items in the patch's order, the live-only items in the live order, a live-only item placed before a patch
  item only when the live list has it first; so an item only the patch has goes before the live ones;
- every other list is replaced;
- ``$patch: replace`` in a map replaces the map, ``$patch: delete`` empties it, ``$patch: merge`` is the default;
- ``$retainKeys`` keeps only the listed keys of the original map before the patch merges, and refuses a patch
  that sets a key it does not list (upstream's ``retainKeys`` strategy);
- ``$setElementOrder/<field>`` merges its list first, then orders it: the directive's order, then the patch
  list's, then the live list's; a patch list out of the directive's order is refused.

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


def _merge_key(parent: str, field: str) -> str | None:
    return MERGE_KEYS.get((parent, field)) or MERGE_KEYS.get(("", field))


def strategic_merge(original: Any, patch: Any) -> Any:
    """The result of applying ``patch`` to ``original`` (neither is changed). Raises PatchError."""
    if not isinstance(patch, Mapping):
        raise PatchError("a strategic merge patch must be a JSON object")
    return _merge_map(original if isinstance(original, Mapping) else {}, patch, parent="")


def _merge_map(original: Mapping[str, Any], patch: Mapping[str, Any], *, parent: str) -> dict[str, Any]:
    directive = patch.get(_DIRECTIVE)
    if directive == "delete":
        return {}  # handleDirectiveInMergeMap: the map is emptied, not removed
    if directive == "replace":
        replaced: dict[str, Any] = _strip({k: v for k, v in patch.items() if k != _DIRECTIVE})
        return replaced
    if directive is not None:
        raise PatchError(f"Unknown patch type: {directive}")
    result = dict(original)
    if _RETAIN in patch:
        _retain(result, patch)
    ordered = _set_element_orders(result, original, patch, parent=parent)
    for key, value in patch.items():
        if key in (_RETAIN,) or key in ordered or key.startswith(_ORDER):
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
        result[key] = _merge_value(result.get(key), value, parent=parent, field=key)
    return result


def _retain(result: dict[str, Any], patch: Mapping[str, Any]) -> None:
    """applyRetainKeysDirective: every key the patch sets must be listed; the original keeps only the listed ones,
    before the patch merges."""
    retain = patch[_RETAIN]
    if not isinstance(retain, list):
        raise PatchError("invalid patch format of retainKeys")
    for key in patch:
        if key != _RETAIN and not key.startswith((_ORDER, _DELETE_PRIMITIVE, _DIRECTIVE)) and key not in retain:
            raise PatchError("invalid patch format of retainKeys")
    for key in [k for k in result if k not in retain]:
        del result[key]


def _merge_value(original: Any, value: Any, *, parent: str, field: str) -> Any:
    if isinstance(value, Mapping):
        return _merge_map(original if isinstance(original, Mapping) else {}, value, parent=field)
    if isinstance(value, list):
        key = _merge_key(parent, field)
        if key is not None or field in SET_LISTS:
            return _merge_list(original if isinstance(original, list) else [], value, key=key, field=field)
        if any(isinstance(v, Mapping) and _DIRECTIVE in v for v in value):
            return _strip([v for v in value if not (isinstance(v, Mapping) and _DIRECTIVE in v)])
        return clone(value)
    return value


def _set_element_orders(result: dict[str, Any], original: Mapping[str, Any], patch: Mapping[str, Any], *,
                        parent: str) -> set[str]:
    """mergePatchIntoOriginal: each ``$setElementOrder/<field>`` merges its list first, then orders it, the
    directive's order over the patch list's over the live list's. Returns the fields it merged."""
    done = set()
    for directive, order in patch.items():
        if not directive.startswith(_ORDER):
            continue
        field = directive[len(_ORDER):]
        if not isinstance(order, list):
            raise PatchError(f"{directive} must be a list")
        key = _merge_key(parent, field)
        listed = patch.get(field)
        if field in patch and not isinstance(listed, list):
            raise PatchError(f"{field}: must be a list to be ordered by {directive}")
        _check_order(listed or [], order, key)
        live = result.get(field)
        live_list = live if isinstance(live, list) else []
        if field in result and field in patch:
            merged, live_list = _merge_list_in_place(live_list, listed or [], key=key, field=field)
        elif field in result:
            merged = list(live_list)
        elif field in patch:
            merged = _strip([v for v in listed or [] if not (isinstance(v, Mapping) and _DIRECTIVE in v)])
        else:
            continue
        result[field] = _order_merged(merged, order, live_list, key)
        done.add(field)
    return done


def _check_order(listed: list[Any], order: list[Any], key: str | None) -> None:
    """validatePatchWithSetOrderList: the patch list's items (deletions aside) come in the directive's order."""
    items = [v for v in listed if not (isinstance(v, Mapping) and _DIRECTIVE in v)]
    i = j = 0
    while i < len(items) and j < len(order):
        if _ident(items[i], key) == _ident(order[j], key):
            i += 1
        j += 1
    if i < len(items):
        raise PatchError(f"The order in patch list:\n{listed}\n doesn't match {_ORDER} list:\n{order}\n")


def _merge_list(original: list[Any], patch: list[Any], *, key: str | None, field: str) -> list[Any]:
    """mergeSlice: a set of scalars is deduplicated; a list of objects merges by ``key`` ($patch: delete removes,
    $patch: replace replaces); then the patch's items come in the patch's order, the others in the live order,
    interleaved by the live order (an item only the patch has goes before the live ones, as upstream puts it)."""
    return _merge_list_in_place(original, patch, key=key, field=field)[0]


def _merge_list_in_place(original: list[Any], patch: list[Any], *, key: str | None,
                         field: str) -> tuple[list[Any], list[Any]]:
    """(the merged list, the live list as the merge left it). Upstream deletes and appends in the live slice's own
    array (Go's ``append(s[:k], s[k+1:]...)``, and ``append`` where a deletion left room), so the live list a
    ``$setElementOrder`` orders by afterwards is that array: deleted items shifted out, appended ones in their room.
    kube-apiserver builds the live object's slices with no spare room (``ToUnstructured``); so is ``original``."""
    if not original and not patch:
        return [], original
    if key is None:
        merged = _dedupe([*original, *patch])
        return _order_merged(merged, patch, original, key), original
    array = list(original)  # the live slice's array: the caller's view of the live list, edited in place
    length, plain, replace = len(array), [], False
    for item in patch:
        directive = _special(item, key=key, field=field)
        if directive is None:
            plain.append(item)
        elif directive == "delete":
            while (k := next((i for i in range(length) if _ident(array[i], key) == item[key]), -1)) >= 0:
                array[k:length - 1] = array[k + 1:length]
                length -= 1
        else:
            replace = True
    if replace:
        kept: list[Any] = _strip(plain)
        return kept, array
    live = array[:length]
    grown: list[Any] | None = None  # an array of its own, once an append outgrew the live one
    for item in plain:
        current = grown if grown is not None else array
        size = len(grown) if grown is not None else length
        index = next((i for i in range(size) if _ident(current[i], key) == item[key]), None)
        if index is not None:
            current[index] = _merge_map(current[index], item, parent=field)
        elif grown is None and length < len(array):
            array[length] = _strip(item)
            length += 1
        else:
            grown = (grown if grown is not None else array[:length]) + [_strip(item)]
    merged = grown if grown is not None else array[:length]
    return _order_merged(merged, plain, live, key), array


def _order_merged(merged: list[Any], items: list[Any], live: list[Any], key: str | None) -> list[Any]:
    """normalizeElementOrder: the patch's items in the patch's order, the live-only ones in the live order,
    interleaved by the live order."""
    in_patch = [v for v in merged if _index(items, v, key) >= 0]
    server_only = [v for v in merged if _index(items, v, key) < 0]
    return _interleave(_sorted_by(server_only, live, key), _sorted_by(in_patch, items, key), live, key)


def _special(item: Any, *, key: str, field: str) -> str | None:
    """The directive of an element of a list merged by ``key`` (None: a plain element); PatchError for a bad one."""
    if not isinstance(item, Mapping):
        raise PatchError(f"{field}: elements must be objects with the merge key {key!r}")
    directive = item.get(_DIRECTIVE)
    if directive in (None, "delete") and key not in item:
        raise PatchError(f"map: {dict(item)} does not contain declared merge key: {key}")
    if directive == "merge":
        raise PatchError("merging lists cannot yet be specified in the patch")
    if directive not in (None, "delete", "replace"):
        raise PatchError(f"Unknown patch type: {directive}")
    return directive if directive is None else str(directive)


def _ident(value: Any, key: str | None) -> Any:
    return value.get(key) if key is not None and isinstance(value, Mapping) else value


def _index(items: list[Any], value: Any, key: str | None) -> int:
    """Where ``value`` is in ``items`` (by its merge key for objects); -1 when it is not."""
    wanted = _ident(value, key)
    return next((i for i, v in enumerate(items) if _ident(v, key) == wanted), -1)


def _sorted_by(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    """normalizeSliceOrder: Go's stable insertion sort with upstream's comparison, where an item ``order`` lacks
    counts as less than any other (so it moves to the front)."""
    out = list(items)
    for i in range(1, len(out)):
        j = i
        while j > 0:
            a, b = _index(order, out[j], key), _index(order, out[j - 1], key)
            if a >= 0 and b >= 0 and not a < b:
                break
            out[j - 1], out[j] = out[j], out[j - 1]
            j -= 1
    return out


def _interleave(left: list[Any], right: list[Any], live: list[Any], key: str | None) -> list[Any]:
    """mergeSortedSlice: the live-only items (``left``) go in among the patch's (``right``); one goes first only
    when both are in the live list and it comes before there."""
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li, ri = _index(live, left[i], key), _index(live, right[j], key)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _dedupe(values: list[Any]) -> list[Any]:
    """deduplicateScalars: a later duplicate is replaced by the last value (upstream's in-place algorithm)."""
    out = list(values)
    length = len(out) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if out[i] == out[j]:
                out[j] = out[length]
                out = out[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return out


def _strip(value: Any) -> Any:
    """A copy without directives (a replaced map or list may still carry nested ones)."""
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items()
                if k not in (_DIRECTIVE, _RETAIN) and not k.startswith((_ORDER, _DELETE_PRIMITIVE))}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
