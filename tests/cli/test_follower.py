"""The command line's follower (``get --watch``, ``status``, the dashboard) keeps its copy through the runtime's
reflector (``runtime/informer.py``, client-go's ``tools/cache/reflector.go``), not a list/watch loop of its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from runtime_fakes import FakeSource, run

from rollwise.api.errors import NotFound
from rollwise.cli.follow import Follower
from rollwise.cluster.resources import STATEFULSET, GroupKind
from rollwise.runtime.clock import VirtualClock
from rollwise.runtime.informer import BACKOFF_CAP_SECONDS, ListResult, WatchEvent


def _follower(clock: VirtualClock) -> tuple[Follower, dict[GroupKind, FakeSource]]:
    sources: dict[GroupKind, FakeSource] = {}

    def source(gk: GroupKind) -> FakeSource:
        return sources.setdefault(gk, FakeSource(gk.kind))
    follower = Follower(None, None, [STATEFULSET], source=source, clock=clock)  # type: ignore[arg-type]
    return follower, sources


def test_a_watch_the_server_closes_is_taken_up_again_from_the_last_resource_version_without_a_list() -> None:
    async def go() -> None:
        clock = VirtualClock()
        follower, sources = _follower(clock)
        await follower.start()
        sets = sources[STATEFULSET]
        await sets.put("web")
        await clock.settle()
        assert follower.find(STATEFULSET, "default", "web") is not None
        await sets.close_watches()
        await clock.settle()
        await sets.put("db")
        await clock.settle()
        assert sets.lists == [""] and sets.watches == ["0", "1"]
        assert [o["metadata"]["name"] for o in follower.of_kind(STATEFULSET)] == ["web", "db"]
        await follower.stop()
    run(go())


class _Flaky(FakeSource):
    """A resource on a server that can stop answering: every list and watch then fails as a refused connection."""

    down = False

    async def list(self, *, resource_version: str) -> ListResult:
        if self.down:
            raise OSError("connection refused")
        return await super().list(resource_version=resource_version)

    async def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        if self.down:
            raise OSError("connection refused")
        async for event in super().watch(resource_version=resource_version, timeout_seconds=timeout_seconds):
            yield event


def test_a_server_that_stops_answering_is_said_until_it_answers_and_a_set_deleted_meanwhile_leaves_no_ghost() -> None:
    async def go() -> None:
        clock = VirtualClock()
        sources: dict[GroupKind, _Flaky] = {}
        follower = Follower(None, None, [STATEFULSET], clock=clock,  # type: ignore[arg-type]
                            source=lambda gk: sources.setdefault(gk, _Flaky(gk.kind)))
        sets = sources.setdefault(STATEFULSET, _Flaky("StatefulSet"))
        await sets.put("web")
        await sets.put("db")
        await follower.start()
        sets.down = True
        await sets.close_watches()
        await clock.settle()
        assert follower.unreachable == "connection refused"
        await sets.remove("db")
        sets.compact()  # the watch position the follower holds is gone: it must list again
        sets.down = False
        await clock.advance(BACKOFF_CAP_SECONDS * 2)
        assert [o["metadata"]["name"] for o in follower.of_kind(STATEFULSET)] == ["web"]
        assert follower.unreachable is None
        await follower.stop()
    run(go())


def test_a_watch_taken_up_again_after_a_failure_clears_it_when_the_server_closes_it() -> None:
    async def go() -> None:
        clock = VirtualClock()
        sources: dict[GroupKind, _Flaky] = {}
        follower = Follower(None, None, [STATEFULSET], clock=clock,  # type: ignore[arg-type]
                            source=lambda gk: sources.setdefault(gk, _Flaky(gk.kind)))
        await follower.start()
        sets = sources[STATEFULSET]
        sets.down = True
        await sets.close_watches()
        await clock.settle()
        assert follower.unreachable == "connection refused"
        sets.down = False
        await clock.advance(BACKOFF_CAP_SECONDS * 2)  # watching again, with nothing to tell
        await sets.close_watches()
        await clock.settle()
        assert follower.unreachable is None
        await follower.stop()
    run(go())


def test_a_set_kind_the_server_does_not_serve_fails_the_start() -> None:
    class Missing(FakeSource):
        async def list(self, *, resource_version: str):  # type: ignore[no-untyped-def]
            raise NotFound("the server could not find the requested resource")

    async def go() -> None:
        follower = Follower(None, None, [STATEFULSET], source=lambda gk: Missing(gk.kind),  # type: ignore[arg-type]
                            clock=VirtualClock())
        with pytest.raises(NotFound):
            await follower.start()
    asyncio.run(go())
