"""One store behind ``v1`` and ``events.k8s.io/v1`` Events: written through either API, read through both, in each
API's shape; field selectors in either API's names."""

from __future__ import annotations

from server_support import AUTH, api, body, run

CORE = "/api/v1/namespaces/default/events"
NEW = "/apis/events.k8s.io/v1/namespaces/default/events"


def test_an_event_written_as_v1_reads_as_events_k8s_io_and_back() -> None:
    async def t() -> None:
        async with api() as (c, _):
            created = await c.post(CORE, headers=AUTH, json={
                "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"}, "message": "hello",
                "reason": "Tested", "type": "Normal", "count": 2, "firstTimestamp": "2026-01-01T00:00:00Z",
                "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}})
            assert created.status == 201
            seen = await body(await c.get(f"{NEW}/e1", headers=AUTH))
            assert seen["apiVersion"] == "events.k8s.io/v1"
            assert (seen["note"], seen["regarding"]["name"], seen["deprecatedCount"]) == ("hello", "p", 2)
            assert seen["deprecatedFirstTimestamp"] == "2026-01-01T00:00:00Z"
            listed = await body(await c.get(f"{NEW}?fieldSelector=regarding.name=p", headers=AUTH))
            assert [e["metadata"]["name"] for e in listed["items"]] == ["e1"]
            posted = await c.post(NEW, headers=AUTH, json={
                "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e2"}, "note": "new",
                "reason": "Tested", "type": "Normal", "eventTime": "2026-01-01T00:00:00.000000Z",
                "reportingController": "me", "reportingInstance": "me-1", "action": "Test",
                "regarding": {"kind": "Pod", "name": "q", "namespace": "default"}})
            assert posted.status == 201
            core = await body(await c.get(f"{CORE}/e2", headers=AUTH))
            assert (core["apiVersion"], core["message"], core["involvedObject"]["name"]) == ("v1", "new", "q")
            assert core["reportingComponent"] == "me"
            patched = await body(await c.patch(f"{NEW}/e2", headers={
                **AUTH, "Content-Type": "application/merge-patch+json"}, json={"note": "changed"}))
            assert patched["note"] == "changed"
            assert (await body(await c.get(f"{CORE}/e2", headers=AUTH)))["message"] == "changed"
    run(t)
