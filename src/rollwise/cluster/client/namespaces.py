"""One list/watch source over several namespaces (``rollwise run --namespaces a,b``): an informer and its store
see the union, as client-go's multi-namespace cache does with one reflector per namespace.

Each namespace keeps its own watch position: a merged stream must never re-watch namespace A from a version that
namespace B's events reached, or A's events between the two would be lost. So ``list`` records every namespace's
list version, ``watch`` resumes each namespace from its own last event (the version the informer passes is the
newest of all, and is used only before the first list), and a 410 from any namespace surfaces as one, so the
informer relists them all. A clean close of any namespace's stream ends the merged one; the informer re-watches.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import cast

from rollwise.cluster.client.listwatch import ListResult, ListWatchSource, WatchEvent

__all__ = ["MultiNamespaceListWatch"]

_DONE = object()


def _newest(versions: Sequence[str]) -> str:
    """The newest of resourceVersions compared as integers (by length, then lexically), "" for none."""
    return max(versions, key=lambda v: (len(v), v), default="")


class MultiNamespaceListWatch:
    def __init__(self, sources: Sequence[ListWatchSource]) -> None:
        if not sources:
            raise ValueError("at least one namespace")
        self.sources = list(sources)
        self.kind = sources[0].kind
        self._positions = [""] * len(sources)

    async def list(self, *, resource_version: str) -> ListResult:
        results = await asyncio.gather(*(s.list(resource_version=resource_version) for s in self.sources))
        self._positions = [r.resource_version for r in results]
        return ListResult(items=[o for r in results for o in r.items],
                          resource_version=_newest(self._positions))

    async def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        queue: asyncio.Queue[object] = asyncio.Queue()

        async def pump(i: int) -> None:
            try:
                start = self._positions[i] or resource_version
                async for event in self.sources[i].watch(resource_version=start, timeout_seconds=timeout_seconds):
                    await queue.put((i, event))
                await queue.put(_DONE)
            except Exception as err:  # Gone included: handed to the informer as if from one stream
                await queue.put(err)

        tasks = [asyncio.create_task(pump(i)) for i in range(len(self.sources))]
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    return
                if isinstance(item, Exception):
                    raise item
                i, event = cast(tuple[int, WatchEvent], item)
                rv = str(event.obj.get("metadata", {}).get("resourceVersion") or "")
                if rv:
                    self._positions[i] = rv
                yield event
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
