"""A reaction to a stored write that raises does not fail the write: kube-apiserver answers a write once it is
persisted and the controllers react apart (client-go's processorListener). The error is logged once with its
traceback, never sent to the client, and the other reactions still see the change."""

from __future__ import annotations

import json
import logging

import pytest
from server_support import AUTH, api, body, pod, run

from rollwise.cluster.protocol import Change

PODS = "/api/v1/namespaces/default/pods"


def test_a_write_whose_reaction_raises_answers_success_and_is_readable(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []

    def broken(ch: Change) -> None:
        raise RuntimeError("reaction bug")

    async def main() -> None:
        async with api() as (client, store):
            store.feed.listen(broken)
            store.feed.listen(lambda ch: seen.append(f"{ch.type} {ch.name}") if ch.kind == "Pod" else None)
            created = await client.post(PODS, headers=AUTH, data=json.dumps(pod("a")))
            assert created.status == 201, await created.text()
            assert (await body(created))["metadata"]["name"] == "a"
            patched = await client.patch(f"{PODS}/a", headers={**AUTH, "Content-Type": "application/merge-patch+json"},
                                         data=json.dumps({"metadata": {"labels": {"x": "y"}}}))
            assert patched.status == 200, await patched.text()
            got = await client.get(f"{PODS}/a", headers=AUTH)
            assert got.status == 200
            assert (await body(got))["metadata"]["labels"] == {"x": "y"}

    with caplog.at_level(logging.DEBUG, logger="rollwise"):
        run(main)
    assert seen == ["ADDED a", "MODIFIED a"]  # the reaction after the broken one still saw both writes
    with_traceback = [r for r in caplog.records if r.exc_info and "reaction bug" in str(r.exc_info[1])]
    assert len(with_traceback) == 1, [r.getMessage() for r in caplog.records]
    assert with_traceback[0].name == "rollwise.feed"
    assert not any(r.name == "rollwise.apiserver" and r.levelno >= logging.ERROR for r in caplog.records)
