"""JSON-shaped values for the in-memory store: a fast deep copy and RFC 7386 JSON merge patch.

``MemoryCluster`` copies every object it stores (``clone``) and applies ``patch`` calls as a merge patch over the
whole object (``merge_patch``); strategic merge patch and server-side apply are not modelled.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["clone", "merge_patch"]


def clone(value: Any) -> Any:
    """A deep copy of a JSON-shaped value (dicts, lists, scalars); several times faster than copy.deepcopy."""
    t = type(value)
    if t is dict:
        return {k: clone(v) for k, v in value.items()}
    if t is list:
        return [clone(v) for v in value]
    if t in (str, int, float, bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: clone(v) for k, v in value.items()}
    if t is tuple:
        return [clone(v) for v in value]
    return copy.deepcopy(value)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge recursively, null deletes a key, anything else (lists) replaces.

    Returns a new value; ``target`` is not changed, and its untouched parts are shared with the result.
    """
    if not isinstance(patch, Mapping):
        return clone(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result
