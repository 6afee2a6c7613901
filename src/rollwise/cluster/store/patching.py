"""JSON-shaped values for the in-memory store: a copy that shares what is stored already, and RFC 7386 JSON merge
patch.

``MemoryCluster`` copies every object it stores (``api.values.clone``, or ``clone_sharing`` for a status written
back) and applies ``patch`` calls as a merge patch over the whole object (``merge_patch``); strategic merge patch
and server-side apply are not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.values import clone

__all__ = ["clone_sharing", "merge_patch"]


def clone_sharing(value: Any, stored: Any) -> Any:
    """``clone(value)``, except that the parts of ``value`` that are parts of ``stored`` (the very objects, found by
    identity) are shared, not copied: ``stored`` is a stored object's, which never changes. A status written back
    with most of its conditions as they were copies only what is new."""
    if value is stored:
        return value
    t = type(value)
    if t is dict and type(stored) is dict:
        return {k: clone_sharing(v, stored.get(k)) for k, v in value.items()}
    if t is list and type(stored) is list and stored:
        kept = {id(v) for v in stored}
        return [v if id(v) in kept else clone(v) for v in value]
    return clone(value)


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
