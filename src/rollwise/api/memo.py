"""Pure functions of stored objects, memoised on the identity of the objects they read.

Stores never change a stored dict, and a write that leaves a part of an object unchanged shares that part with the
new object (a status write keeps the old ``spec``; a kubelet write keeps the pod's ``spec``). So while the same
objects come back, their identity stands for their content, and a set reconciled on every pod event computes
what depends only on its spec once per spec version instead of once per event.

An entry holds the objects it is keyed on: an id cannot be reused by another object while its entry lives, so an
equal key means the very same objects. The memo empties itself when full (the working set of a run is a few
objects per set; a bound keeps a long-lived process from holding every spec it ever saw).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["IdentityMemo"]

V = TypeVar("V")

_Key = tuple[tuple[int, ...], Hashable]


class IdentityMemo(Generic[V]):
    """Values keyed on ``anchors`` (objects, by identity) and ``extra`` (values, by equality; an unhashable one is
    never stored)."""

    __slots__ = ("_entries", "_limit")

    def __init__(self, limit: int = 4096) -> None:
        self._entries: dict[_Key, tuple[tuple[object, ...], V]] = {}
        self._limit = limit

    def get(self, anchors: tuple[object, ...], extra: object = None) -> V | None:
        """The value stored for these objects, or None (values are never None)."""
        try:
            hit = self._entries.get((tuple(map(id, anchors)), extra))
        except TypeError:  # an unhashable extra (a list where a manifest should have a string) is never stored
            return None
        return None if hit is None else hit[1]

    def put(self, anchors: tuple[object, ...], extra: object, value: V) -> V:
        if len(self._entries) >= self._limit:
            self._entries.clear()
        with contextlib.suppress(TypeError):  # see get
            self._entries[(tuple(map(id, anchors)), extra)] = (anchors, value)
        return value

    def cached(self, anchors: tuple[object, ...], extra: object, compute: Callable[[], V]) -> V:
        """The value for these objects, computed on the first call."""
        hit = self.get(anchors, extra)
        return hit if hit is not None else self.put(anchors, extra, compute())

    def clear(self) -> None:
        self._entries.clear()
