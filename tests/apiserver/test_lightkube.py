"""lightkube's AsyncClient (the client rollwise's operator uses) against the in-process server: list and watch with
resume, 410 after a compaction, API errors typed as ApiError, merge and strategic patch, status and scale."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from lightkube import ApiError, AsyncClient
from lightkube.config.kubeconfig import KubeConfig
from lightkube.generic_resource import create_namespaced_resource
from lightkube.types import PatchType
from server_support import DEADLINE, TOKEN, api, pod, run, sts

from rollwise.apiserver.storage.store import ApiStore

Pod = create_namespaced_resource("", "v1", "Pod", "pods")
StatefulSet = create_namespaced_resource("apps", "v1", "StatefulSet", "statefulsets")


@asynccontextmanager
async def client(**config: Any) -> AsyncIterator[tuple[AsyncClient, ApiStore]]:
    async with api(**config) as (test_client, store):
        url = str(test_client.make_url("")).rstrip("/")
        conf = KubeConfig.from_dict({
            "clusters": [{"name": "c", "cluster": {"server": url}}],
            "users": [{"name": "u", "user": {"token": TOKEN}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "default"}}],
            "current-context": "x"})
        lk = AsyncClient(conf, trust_env=False, field_manager="test")
        try:
            yield lk, store
        finally:
            await lk.close()


async def _first(aiter: Any) -> Any:
    async def take() -> Any:
        async for item in aiter:
            return item
        return None
    return await asyncio.wait_for(take(), DEADLINE)


def test_list_then_watch_resumes_from_the_list_resource_version() -> None:
    async def t() -> None:
        async with client() as (lk, _):
            await lk.create(Pod(pod("a")))
            listing = lk.list(Pod, namespace="default")
            names = [p.metadata.name async for p in listing]
            assert names == ["a"]
            rv = listing.resourceVersion
            await lk.create(Pod(pod("b")))
            event, obj = await _first(lk.watch(Pod, namespace="default", resource_version=rv, server_timeout=5))
            assert (event, obj.metadata.name) == ("ADDED", "b")
    run(t)


def test_watch_from_before_a_compaction_raises_410() -> None:
    async def t() -> None:
        async with client() as (lk, store):
            created = await lk.create(Pod(pod("a")))
            await lk.create(Pod(pod("b")))
            store.cluster.compact_history()
            with pytest.raises(ApiError) as err:
                await _first(lk.watch(Pod, namespace="default", resource_version=created.metadata.resourceVersion,
                                      server_timeout=5))
            assert err.value.status.code == 410
    run(t)


def test_not_found_conflict_and_invalid_are_api_errors() -> None:
    async def t() -> None:
        async with client() as (lk, _):
            with pytest.raises(ApiError) as missing:
                await lk.get(Pod, "nope", namespace="default")
            assert (missing.value.status.code, missing.value.status.reason) == (404, "NotFound")
            await lk.create(Pod(pod("a")))
            with pytest.raises(ApiError) as dup:
                await lk.create(Pod(pod("a")))
            assert (dup.value.status.code, dup.value.status.reason) == (409, "AlreadyExists")
            current = await lk.get(Pod, "a", namespace="default")
            stale = current.metadata.resourceVersion
            await lk.patch(Pod, "a", {"metadata": {"labels": {"x": "1"}}}, namespace="default",
                           patch_type=PatchType.MERGE)
            current.metadata.resourceVersion = stale
            with pytest.raises(ApiError) as conflict:
                await lk.replace(current)
            assert (conflict.value.status.code, conflict.value.status.reason) == (409, "Conflict")
            bad = sts("web")
            bad["spec"]["replicas"] = -2
            with pytest.raises(ApiError) as invalid:
                await lk.create(StatefulSet(bad))
            assert invalid.value.status.code == 422
            assert invalid.value.status.details.causes[0].field == "spec.replicas"
    run(t)


def test_merge_and_strategic_patch_status_and_scale_subresources() -> None:
    async def t() -> None:
        async with client() as (lk, _):
            await lk.create(StatefulSet(sts("web")))
            await lk.patch(StatefulSet, "web", {"metadata": {"labels": {"tier": "db"}}}, namespace="default",
                           patch_type=PatchType.MERGE)
            patched = await lk.patch(
                StatefulSet, "web",
                {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}},
                namespace="default", patch_type=PatchType.STRATEGIC)
            assert patched.metadata.labels == {"tier": "db"}
            assert patched.spec["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"
            status = await lk.patch(StatefulSet.Status, "web", {"status": {"replicas": 3, "readyReplicas": 1}},
                                    namespace="default", patch_type=PatchType.MERGE)
            assert status.status["readyReplicas"] == 1
            scale = await lk.get(StatefulSet.Scale, "web", namespace="default")
            assert (scale.spec.replicas, scale.status.replicas) == (2, 3)
            scale.spec.replicas = 5
            scaled = await lk.replace(scale, "web", namespace="default")
            assert scaled.spec.replicas == 5
            assert (await lk.get(StatefulSet, "web", namespace="default")).spec["replicas"] == 5
    run(t)


def test_apply_creates_a_missing_object() -> None:
    async def t() -> None:
        async with client() as (lk, _):
            applied = await lk.apply(Pod(pod("made", app="x")), field_manager="test")
            assert applied.metadata.uid
            again = await lk.apply(Pod(pod("made", app="x", tier="y")), field_manager="test")
            assert again.metadata.labels == {"app": "x", "tier": "y"}
            assert again.metadata.uid == applied.metadata.uid
    run(t)
