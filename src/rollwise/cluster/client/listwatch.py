"""The list/watch protocol an informer runs over: the real API (``cluster.client.kube``) or an in-memory source."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Protocol

from rollwise.api.meta import Obj

__all__ = ["ListResult", "ListWatchSource", "WatchEvent"]


@dataclass(frozen=True, slots=True)
class ListResult:
    items: list[Obj]
    resource_version: str


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]
    obj: Obj


class ListWatchSource(Protocol):
    kind: str

    async def list(self, *, resource_version: str) -> ListResult:
        """Every object (following pagination), and the list's resourceVersion."""
        ...

    def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        """Events after ``resource_version``; ends when the server closes the stream. Raises Gone (410) when
        that position is no longer in the server's history, at once or as an ERROR event."""
        ...
