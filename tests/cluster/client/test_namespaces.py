"""`rollwise run --namespaces a,b`: one source over several namespaces, each resumed from its own position."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from rollwise.api.errors import Gone
from rollwise.cluster.client.listwatch import ListResult, WatchEvent
from rollwise.cluster.client.namespaces import MultiNamespaceListWatch


class Source:
    def __init__(self, ns: str, rv: str, events: list[tuple[str, str]], *, gone: bool = False) -> None:
        self.kind = "Pod"
        self.ns, self.rv, self.events, self.gone = ns, rv, events, gone
        self.watched_from: list[str] = []

    async def list(self, *, resource_version: str) -> ListResult:
        return ListResult(items=[{"metadata": {"name": f"{self.ns}-p", "namespace": self.ns}}],
                          resource_version=self.rv)

    async def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        self.watched_from.append(resource_version)
        if self.gone:
            raise Gone("too old")
        for name, rv in self.events:
            await asyncio.sleep(0)
            yield WatchEvent("ADDED", {"metadata": {"name": name, "namespace": self.ns, "resourceVersion": rv}})
        self.events = []


def test_lists_the_union_and_resumes_each_namespace_from_its_own_last_event() -> None:
    a = Source("a", "10", [("a1", "90")])
    b = Source("b", "20", [("b1", "100"), ("b2", "120")])
    merged = MultiNamespaceListWatch([a, b])

    async def go() -> list[str]:
        listed = await merged.list(resource_version="0")
        assert [o["metadata"]["name"] for o in listed.items] == ["a-p", "b-p"] and listed.resource_version == "20"
        names = [e.obj["metadata"]["name"] async for e in merged.watch(resource_version="20", timeout_seconds=300)]
        # The informer re-watches from the newest version it saw (120); each namespace resumes from its own.
        async for _ in merged.watch(resource_version="120", timeout_seconds=300):
            pass
        return names

    names = asyncio.run(go())
    assert set(names) <= {"a1", "b1", "b2"} and names
    assert a.watched_from[0] == "10" and b.watched_from[0] == "20"
    assert a.watched_from[1] in ("10", "90") and b.watched_from[1] in ("20", "100", "120")
    assert a.watched_from[1] != "120", "namespace a never skips to b's position"


def test_a_410_from_any_namespace_is_the_merged_streams() -> None:
    merged = MultiNamespaceListWatch([Source("a", "1", [("a1", "5")]), Source("b", "1", [], gone=True)])

    async def go() -> None:
        await merged.list(resource_version="0")
        async for _ in merged.watch(resource_version="1", timeout_seconds=300):
            pass

    with pytest.raises(Gone):
        asyncio.run(go())
