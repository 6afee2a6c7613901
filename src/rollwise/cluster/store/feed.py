"""The change feed: every write in order, with who wrote it, for a consumer that reads everything (the simulator).

Positions (cursors) count changes from the store's start. ``compact`` discards what every reader has consumed;
a reader behind it gets Gone and must re-list. With a ``limit``, the feed keeps at most about that many changes
on its own, for stores nobody drains (the API server's watchers use per-resource histories instead).
"""

from __future__ import annotations

import builtins

from rollwise.api.errors import Gone
from rollwise.cluster.protocol import Change

__all__ = ["ChangeFeed"]


class ChangeFeed:
    __slots__ = ("_base", "_changes", "_limit")

    def __init__(self, *, limit: int | None = None) -> None:
        self._changes: builtins.list[Change] = []
        self._base = 0  # position of _changes[0]; earlier changes were compacted away
        self._limit = limit

    @property
    def cursor(self) -> int:
        return self._base + len(self._changes)

    def append(self, change: Change) -> None:
        self._changes.append(change)
        if self._limit is not None and len(self._changes) > 2 * self._limit:
            self.compact(self.cursor - self._limit)

    def since(self, cursor: int) -> tuple[builtins.list[Change], int]:
        if cursor < self._base:
            raise Gone(f"changes before position {self._base} were compacted (asked from {cursor})")
        if cursor > self.cursor:
            raise ValueError(f"cursor {cursor} is ahead of the feed ({self.cursor})")
        return self._changes[cursor - self._base:], self.cursor

    def compact(self, cursor: int) -> None:
        drop = min(cursor, self.cursor) - self._base
        if drop > 0:
            del self._changes[:drop]
            self._base += drop
