"""The HTTP protocol as kubectl and the Python clients use it, against the in-process server."""

from __future__ import annotations

from server_support import AUTH, api, body, next_event, pod, run, sts

PODS = "/api/v1/namespaces/default/pods"
STS = "/apis/apps/v1/namespaces/default/statefulsets"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def test_requests_without_a_known_token_get_401_but_version_is_open() -> None:
    async def t() -> None:
        async with api() as (c, _):
            resp = await c.get(PODS)
            assert resp.status == 401
            assert resp.headers["Content-Type"] == "application/json"
            assert (await body(resp))["reason"] == "Unauthorized"
            assert (await c.get(PODS, headers={"Authorization": "Bearer wrong"})).status == 401
            version = await c.get("/version")
            assert (await body(version))["minor"] == "37"  # up --kube-version, 1.37 by default
            assert (await c.get(PODS, headers=AUTH)).status == 200
    run(t)


def test_aggregated_discovery_only_when_v2_is_asked() -> None:
    async def t() -> None:
        async with api() as (c, _):
            v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
            resp = await c.get("/apis", headers={**AUTH, "Accept": v2})
            assert resp.headers["Content-Type"].startswith("application/json;g=apidiscovery.k8s.io;v=v2")
            groups = {i["metadata"]["name"] for i in (await body(resp))["items"]}
            assert {"apps", "coordination.k8s.io", "apiextensions.k8s.io"} <= groups
            legacy = await body(await c.get("/apis", headers={**AUTH, "Accept": "application/json"}))
            assert legacy["kind"] == "APIGroupList"
            apps = await body(await c.get("/apis/apps/v1/", headers=AUTH))
            scale = next(r for r in apps["resources"] if r["name"] == "statefulsets/scale")
            assert (scale["group"], scale["kind"]) == ("autoscaling", "Scale")
    run(t)


def test_stale_put_and_patch_precondition_get_409_conflict() -> None:
    async def t() -> None:
        async with api() as (c, _):
            created = await body(await c.post(PODS, json=pod("a"), headers=AUTH))
            stale = created["metadata"]["resourceVersion"]
            created["metadata"]["labels"] = {"x": "1"}
            assert (await c.put(f"{PODS}/a", json=created, headers=AUTH)).status == 200
            resp = await c.put(f"{PODS}/a", json=created, headers=AUTH)
            assert resp.status == 409
            assert (await body(resp))["reason"] == "Conflict"
            patch = {"metadata": {"resourceVersion": stale, "labels": {"y": "2"}}}
            resp = await c.patch(f"{PODS}/a", json=patch,
                                 headers={**AUTH, "Content-Type": "application/merge-patch+json"})
            assert resp.status == 409
            dup = await c.post(PODS, json=pod("a"), headers=AUTH)
            assert (dup.status, (await body(dup))["reason"]) == (409, "AlreadyExists")
    run(t)


def test_dry_run_persists_nothing() -> None:
    async def t() -> None:
        async with api() as (c, store):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            before = store.resource_version
            resp = await c.post(f"{PODS}?dryRun=All", json=pod("b"), headers=AUTH)
            assert resp.status == 201
            resp = await c.patch(f"{PODS}/a?dryRun=All", json={"metadata": {"labels": {"z": "1"}}},
                                 headers={**AUTH, "Content-Type": "application/merge-patch+json"})
            assert (await body(resp))["metadata"]["labels"] == {"z": "1"}
            assert (await c.delete(f"{PODS}/a?dryRun=All", headers=AUTH)).status == 200
            listing = await body(await c.get(PODS, headers=AUTH))
            assert [p["metadata"]["name"] for p in listing["items"]] == ["a"]
            assert listing["items"][0]["metadata"].get("labels") == {}
            assert store.resource_version == before
    run(t)


def test_watch_resumes_after_the_given_resource_version() -> None:
    async def t() -> None:
        async with api() as (c, _):
            first = await body(await c.post(PODS, json=pod("a"), headers=AUTH))
            await c.post(PODS, json=pod("b"), headers=AUTH)
            rv = first["metadata"]["resourceVersion"]
            async with c.get(f"{PODS}?watch=True&resourceVersion={rv}", headers=AUTH) as resp:
                ev = await next_event(resp)
                assert (ev["type"], ev["object"]["metadata"]["name"]) == ("ADDED", "b")
                await c.delete(f"{PODS}/a", json={"gracePeriodSeconds": 0}, headers=AUTH)
                ev = await next_event(resp)
                assert (ev["type"], ev["object"]["metadata"]["name"]) == ("DELETED", "a")
    run(t)


def test_watch_from_before_a_compaction_gets_410_expired() -> None:
    async def t() -> None:
        async with api() as (c, _):
            created = await body(await c.post(PODS, json=pod("a"), headers=AUTH))
            await c.post(PODS, json=pod("b"), headers=AUTH)
            assert (await c.post("/debug/rollwise/compact", headers=AUTH)).status == 200
            rv = created["metadata"]["resourceVersion"]
            async with c.get(f"{PODS}?watch=1&resourceVersion={rv}", headers=AUTH) as resp:
                ev = await next_event(resp)
                assert ev["type"] == "ERROR"
                assert (ev["object"]["code"], ev["object"]["reason"]) == (410, "Expired")
    run(t)


def test_bounded_history_expires_old_positions_without_a_compaction() -> None:
    async def t() -> None:
        async with api(history=3) as (c, _):
            first = await body(await c.post(PODS, json=pod("p0"), headers=AUTH))
            for i in range(1, 6):
                await c.post(PODS, json=pod(f"p{i}"), headers=AUTH)
            async with c.get(f"{PODS}?watch=true&resourceVersion={first['metadata']['resourceVersion']}",
                             headers=AUTH) as resp:
                assert (await next_event(resp))["object"]["code"] == 410
    run(t)


def test_bookmarks_carry_the_current_resource_version() -> None:
    async def t() -> None:
        async with api(bookmark_seconds=0.05) as (c, _):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            async with c.get(f"{PODS}?watch=true&allowWatchBookmarks=true&resourceVersion=0",
                             headers=AUTH) as resp:
                assert (await next_event(resp))["type"] == "ADDED"
                ev = await next_event(resp)
                assert ev["type"] == "BOOKMARK"
                assert ev["object"]["kind"] == "Pod" and int(ev["object"]["metadata"]["resourceVersion"]) > 0
    run(t)


def test_an_object_that_stops_matching_the_selector_is_delivered_as_deleted() -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a", app="x"), headers=AUTH)
            async with c.get(f"{PODS}?watch=true&labelSelector=app%3Dx", headers=AUTH) as resp:
                assert (await next_event(resp))["type"] == "ADDED"
                await c.patch(f"{PODS}/a", json={"metadata": {"labels": {"app": "y"}}},
                              headers={**AUTH, "Content-Type": "application/merge-patch+json"})
                ev = await next_event(resp)
                # Upstream's cacher sends the last state that matched, at the resourceVersion of the change.
                assert (ev["type"], ev["object"]["metadata"]["labels"]) == ("DELETED", {"app": "x"})
                await c.patch(f"{PODS}/a", json={"metadata": {"labels": {"app": "x"}}},
                              headers={**AUTH, "Content-Type": "application/merge-patch+json"})
                assert (await next_event(resp))["type"] == "ADDED"
    run(t)


def test_watch_with_table_accept_wraps_each_event_in_a_table() -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            async with c.get(f"{PODS}?watch=true", headers={**AUTH, "Accept": TABLE}) as resp:
                ev = await next_event(resp)
                assert ev["object"]["kind"] == "Table"
                assert ev["object"]["rows"][0]["cells"][:3] == ["a", "0/1", "Pending"]
    run(t)


def test_invalid_statefulset_is_422_with_field_paths_in_the_causes() -> None:
    async def t() -> None:
        async with api() as (c, _):
            bad = sts("web")
            bad["spec"]["replicas"] = -1
            bad["spec"]["updateStrategy"] = {"type": "Sideways"}
            resp = await c.post(STS, json=bad, headers=AUTH)
            status = await body(resp)
            assert (resp.status, status["reason"]) == (422, "Invalid")
            fields = {cause["field"] for cause in status["details"]["causes"]}
            assert {"spec.replicas", "spec.updateStrategy.type"} <= fields
            assert 'StatefulSet.apps "web" is invalid' in status["message"]
    run(t)


def test_strategic_patch_scale_and_status_subresources() -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(STS, json=sts("web"), headers=AUTH)
            smp = {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "app"}],
                                                  "containers": [{"name": "app", "image": "nginx:1.28"}]}}}}
            resp = await c.patch(f"{STS}/web", json=smp,
                                 headers={**AUTH, "Content-Type": "application/strategic-merge-patch+json"})
            patched = await body(resp)
            assert patched["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"
            assert patched["metadata"]["generation"] == 2
            scale = await body(await c.patch(f"{STS}/web/scale", json={"spec": {"replicas": 4}},
                                             headers={**AUTH, "Content-Type": "application/merge-patch+json"}))
            assert (scale["kind"], scale["apiVersion"], scale["spec"]["replicas"]) == ("Scale", "autoscaling/v1", 4)
            assert scale["status"]["selector"] == "app=web"
            current = await body(await c.get(f"{STS}/web", headers=AUTH))
            current["status"] = {"replicas": 99}
            current["spec"]["replicas"] = 5
            after = await body(await c.put(f"{STS}/web", json=current, headers=AUTH))
            assert (after["spec"]["replicas"], after.get("status", {}).get("replicas")) == (5, None)
            after["status"] = {"replicas": 7}
            after["spec"]["replicas"] = 1
            status = await body(await c.put(f"{STS}/web/status", json=after, headers=AUTH))
            assert (status["spec"]["replicas"], status["status"]["replicas"]) == (5, 7)
    run(t)


def test_protobuf_bodies_get_415_telling_to_use_create_f() -> None:
    async def t() -> None:
        async with api() as (c, _):
            resp = await c.post("/api/v1/namespaces", data=b"k8s\x00...",
                                headers={**AUTH, "Content-Type": "application/vnd.kubernetes.protobuf"})
            status = await body(resp)
            assert (resp.status, status["reason"]) == (415, "UnsupportedMediaType")
            assert "create -f" in status["message"]
    run(t)


def test_list_tables_selectors_and_trailing_slashes() -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a", app="x"), headers=AUTH)
            await c.post(PODS, json=pod("b", app="y"), headers=AUTH)
            listing = await body(await c.get(f"{PODS}/?labelSelector=app+in+(x,z)", headers={**AUTH,
                                                                                               "Accept": TABLE}))
            assert listing["kind"] == "Table"
            assert [r["cells"][0] for r in listing["rows"]] == ["a"]
            assert [col["name"] for col in listing["columnDefinitions"]][:5] == [
                "Name", "Ready", "Status", "Restarts", "Age"]
            named = await body(await c.get("/api/v1/pods?fieldSelector=metadata.name%3Db", headers=AUTH))
            assert [p["metadata"]["name"] for p in named["items"]] == ["b"]
            resp = await c.get(f"{PODS}?fieldSelector=spec.bogus%3D1", headers=AUTH)
            assert resp.status == 400
            missing = await c.get(f"{PODS}/zzz", headers=AUTH)
            assert (missing.status, (await body(missing))["reason"]) == (404, "NotFound")
    run(t)


def test_server_side_apply_creates_a_missing_object_then_merges_by_key() -> None:
    async def t() -> None:
        async with api() as (c, _):
            headers = {**AUTH, "Content-Type": "application/apply-patch+yaml"}
            resp = await c.patch(f"{PODS}/a?fieldManager=test", json=pod("a", app="x"), headers=headers)
            assert resp.status == 201
            again = pod("a", tier="db")
            again["spec"]["containers"] = [{"name": "c", "image": "nginx:1.28"}]
            merged = await body(await c.patch(f"{PODS}/a?fieldManager=test", json=again, headers=headers))
            # The label its only applier stopped sending is gone; the container, keyed by name, is merged.
            assert merged["metadata"]["labels"] == {"tier": "db"}
            assert merged["spec"]["containers"][0]["image"] == "nginx:1.28"
            assert merged["spec"]["containers"][0]["terminationMessagePath"] == "/dev/termination-log"
            other = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"app": "y"}}}
            shared = await body(await c.patch(f"{PODS}/a?fieldManager=other", json=other, headers=headers))
            assert shared["metadata"]["labels"] == {"tier": "db", "app": "y"}
            assert {e["manager"] for e in shared["metadata"]["managedFields"]} == {"test", "other"}
    run(t)
