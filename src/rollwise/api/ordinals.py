"""The ordinals a set runs: ``spec.ordinals.start`` upward, skipping ``spec.reserveOrdinals``.

OpenKruise's Advanced StatefulSet lets a user reserve ordinals: a set of 3 with ``reserveOrdinals: [1]`` runs
ordinals 0, 2 and 3, so a pod whose node or disk is lost for good can be retired without renumbering its
neighbours. Reserved values are absolute ordinals, so they compose with ``ordinals.start``: with start 5 and
``[6]``, three replicas run 5, 7 and 8; a reserved value below start reserves nothing.

The controller works on indexes into the wanted ordinals (``replicas[i]`` is the pod of the i-th wanted ordinal),
as upstream's works on ``ordinal - start``. A partition and ``status.currentReplicas`` count wanted ordinals, not
absolute ones: ``partition: 2`` holds the two lowest wanted ordinals at the current revision. Without reserved
ordinals the span is a plain ``range``, so every existing decision is unchanged.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from typing import Any, overload

from rollwise.api.errors import FieldError
from rollwise.api.validation_rules import check_int, type_error

__all__ = ["OrdinalSpan", "Ordinals", "check_reserve_ordinals", "index_in", "position_in", "reserved_ordinals",
           "span_of"]


class Ordinals:
    """``count`` ordinals from ``start`` upward, the ``reserved`` ones skipped (ascending, a Sequence of int).

    ``start`` is the set's ``ordinals.start`` (not necessarily an element, when it is reserved itself) and
    ``stop`` is one past the highest element, as for a range. Lookups are O(len(reserved)) at worst."""

    __slots__ = ("_count", "_reserved", "_set", "start", "stop")

    def __init__(self, start: int, count: int, reserved: tuple[int, ...]) -> None:
        self.start = start
        self._count = max(count, 0)
        self._reserved = tuple(sorted({r for r in reserved if r >= start}))
        self._set = frozenset(self._reserved)
        self.stop = self._at(self._count - 1) + 1 if self._count else start

    @property
    def reserved(self) -> tuple[int, ...]:
        """The reserved ordinals at or above start, ascending."""
        return self._reserved

    def _at(self, index: int) -> int:
        ordinal = self.start + index
        for r in self._reserved:  # each reserved ordinal at or below the candidate pushes it one further up
            if r > ordinal:
                break
            ordinal += 1
        return ordinal

    def index_of(self, ordinal: int) -> int:
        """The index of ``ordinal`` among the wanted ones, or -1 when it is not wanted."""
        if ordinal < self.start or ordinal >= self.stop or ordinal in self._set:
            return -1
        return ordinal - self.start - bisect.bisect_left(self._reserved, ordinal)

    def index(self, ordinal: int) -> int:
        found = self.index_of(ordinal)
        if found < 0:
            raise ValueError(f"{ordinal} is not a wanted ordinal")
        return found

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...
    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("ordinal index out of range")
        return self._at(index)

    def __contains__(self, ordinal: object) -> bool:
        return isinstance(ordinal, int) and self.index_of(ordinal) >= 0

    def __iter__(self) -> Iterator[int]:
        ordinal, left = self.start, self._count
        while left:
            if ordinal not in self._set:
                yield ordinal
                left -= 1
            ordinal += 1

    def __reversed__(self) -> Iterator[int]:
        return (self._at(i) for i in range(self._count - 1, -1, -1))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Ordinals) and (self.start, self._count, self._reserved)
                == (other.start, other._count, other._reserved))

    def __hash__(self) -> int:
        return hash((self.start, self._count, self._reserved))

    def __repr__(self) -> str:
        return f"Ordinals(start={self.start}, count={self._count}, reserved={list(self._reserved)})"


OrdinalSpan = range | Ordinals
"""What ``api.identity.ordinal_range`` answers: a range when nothing at or above start is reserved."""


def reserved_ordinals(spec: Mapping[str, Any]) -> tuple[int, ...]:
    """``spec.reserveOrdinals`` as given, its non-integers ignored (validation refuses them; the controller never
    sees an invalid set, but a projection or a trace of one must not crash)."""
    value = spec.get("reserveOrdinals")
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool) and v >= 0)


def span_of(start: int, count: int, reserved: tuple[int, ...]) -> OrdinalSpan:
    """The wanted ordinals: a range unless a reserved value is at or above start."""
    if not any(r >= start for r in reserved):
        return range(start, start + count)
    return Ordinals(start, count, reserved)


def position_in(span: OrdinalSpan, ordinal: int) -> int:
    """How many wanted positions lie below ``ordinal``: its index when it is wanted, and for any other ordinal the
    index it would have (``ordinal - start`` for a range). A partition or ``currentReplicas`` compares with it."""
    if isinstance(span, range):
        return ordinal - span.start
    return ordinal - span.start - bisect.bisect_left(span.reserved, ordinal)


def index_in(span: OrdinalSpan, ordinal: int) -> int:
    """The index of ``ordinal`` among the span's ordinals, -1 when it is not one of them."""
    if isinstance(span, range):
        return ordinal - span.start if span.start <= ordinal < span.stop else -1
    return span.index_of(ordinal)


def check_reserve_ordinals(value: object) -> list[FieldError]:
    """``spec.reserveOrdinals``: a list of non-negative int32s, none twice (OpenKruise's rule; the CRD's twin is
    ``items: minimum 0`` with ``x-kubernetes-list-type: set``, whose duplicate error has the same path and kind)."""
    if value is None:
        return []
    if not isinstance(value, list):
        return [type_error("spec.reserveOrdinals", value, "a list of integers")]
    errors: list[FieldError] = []
    seen: set[int] = set()
    for i, item in enumerate(value):
        path = f"spec.reserveOrdinals[{i}]"
        problems = check_int(item, path, minimum=0)
        if problems:
            errors += problems
        elif item in seen:
            errors.append(FieldError(path=path, kind="Duplicate value", value=item,
                                     rule="an ordinal is reserved once"))
        else:
            seen.add(item)
    return errors
