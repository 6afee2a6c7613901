"""The lightkube-backed cluster against a mocked transport: paths, bodies, and errors mapped to rollwise's tree.

The real test is against ``rollwise up``; this pins what can be pinned without a server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
import pytest
from lightkube import AsyncClient
from lightkube.config.kubeconfig import KubeConfig

from rollwise.api import errors
from rollwise.cluster.client.kube import KubeCluster

KUBECONFIG = {
    "apiVersion": "v1", "kind": "Config", "current-context": "t",
    "clusters": [{"name": "t", "cluster": {"server": "http://api.test"}}],
    "users": [{"name": "u", "user": {"token": "op-a"}}],
    "contexts": [{"name": "t", "context": {"cluster": "t", "user": "u", "namespace": "default"}}],
}

Handler = Callable[[httpx.Request], httpx.Response]


def _json(code: int, body: Any) -> httpx.Response:
    return httpx.Response(code, content=json.dumps(body).encode(), headers={"Content-Type": "application/json"})


def _status(code: int, reason: str, message: str = "") -> httpx.Response:
    return _json(code, {"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": code,
                        "reason": reason, "message": message or reason})


def _cluster(handler: Handler, **kwargs: Any) -> tuple[KubeCluster, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(request)
        return handler(request)

    client = AsyncClient(KubeConfig.from_dict(KUBECONFIG), transport=httpx.MockTransport(record), trust_env=False)
    return KubeCluster(client, **kwargs), seen


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default"},
       "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}


def test_create_posts_the_dict_and_returns_the_servers_object() -> None:
    cluster, seen = _cluster(lambda r: _json(201, {**json.loads(r.content), "metadata": {
        "name": "web-0", "namespace": "default", "uid": "u1", "resourceVersion": "5"}}))
    created = asyncio.run(cluster.create(POD))
    assert seen[0].method == "POST" and seen[0].url.path == "/api/v1/namespaces/default/pods"
    assert json.loads(seen[0].content)["spec"] == POD["spec"]
    assert created["metadata"]["resourceVersion"] == "5" and isinstance(created, dict)


@pytest.mark.parametrize(("set_group", "path"), [
    ("apps.rollwise.dev", "/apis/apps.rollwise.dev/v1alpha1/namespaces/default/statefulsets/web"),
    ("apps", "/apis/apps/v1/namespaces/default/statefulsets/web"),
])
def test_statefulset_means_the_configured_group(set_group: str, path: str) -> None:
    cluster, seen = _cluster(lambda r: _json(200, {"kind": "StatefulSet", "metadata": {"name": "web"}}),
                             set_group=set_group)
    asyncio.run(cluster.get("StatefulSet", "default", "web"))
    assert seen[0].url.path == path


def test_an_object_names_its_own_group_by_api_version() -> None:
    cluster, seen = _cluster(lambda r: _json(200, json.loads(r.content)))
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "ns",
                                                                         "resourceVersion": "9"}, "status": {}}
    asyncio.run(cluster.update_status(sts))
    assert seen[0].method == "PUT" and seen[0].url.path == "/apis/apps/v1/namespaces/ns/statefulsets/web/status"
    assert json.loads(seen[0].content)["metadata"]["resourceVersion"] == "9"


@pytest.mark.parametrize(("response", "error", "code"), [
    (_status(404, "NotFound"), errors.NotFound, 404),
    (_status(409, "AlreadyExists"), errors.AlreadyExists, 409),
    (_status(409, "Conflict"), errors.Conflict, 409),
    (_status(410, "Expired"), errors.Gone, 410),
    (_status(422, "Invalid"), errors.Invalid, 422),
    (_status(403, "Forbidden"), errors.ApiStatusError, 403),
    (_status(500, "InternalError"), errors.ApiStatusError, 500),
    (httpx.Response(502, content=b"bad gateway", headers={"Content-Type": "text/plain"}), errors.ApiStatusError,
     502),
], ids=["404", "409-exists", "409-conflict", "410", "422", "403", "500", "502-not-json"])
def test_failures_map_to_the_rollwise_error_tree(response: httpx.Response, error: type, code: int) -> None:
    cluster, _ = _cluster(lambda r: response)
    with pytest.raises(error) as caught:
        asyncio.run(cluster.get("Pod", "default", "web-0"))
    assert caught.value.code == code


def test_a_connection_failure_is_service_unavailable() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    cluster, _ = _cluster(refuse)
    with pytest.raises(errors.ApiStatusError) as caught:
        asyncio.run(cluster.get("Lease", "ns", "rollwise"))
    assert (caught.value.code, caught.value.reason) == (503, "ServiceUnavailable")


def test_a_pod_delete_carries_its_uid_precondition_and_returns_the_terminating_pod() -> None:
    terminating = {**POD, "metadata": {**POD["metadata"], "uid": "u1", "resourceVersion": "12",
                                       "deletionTimestamp": "2026-11-23T20:00:00Z"}}
    cluster, seen = _cluster(lambda r: _json(200, terminating))
    out = asyncio.run(cluster.delete("Pod", "default", "web-0", uid="u1"))
    assert seen[0].method == "DELETE" and seen[0].url.path == "/api/v1/namespaces/default/pods/web-0"
    assert json.loads(seen[0].content) == {"apiVersion": "v1", "kind": "DeleteOptions",
                                           "preconditions": {"uid": "u1"}}
    assert out is not None and out["metadata"]["resourceVersion"] == "12"


def test_a_delete_answered_with_a_status_means_gone_and_a_stale_uid_is_a_conflict() -> None:
    cluster, _ = _cluster(lambda r: _json(200, {"kind": "Status", "status": "Success"}))
    assert asyncio.run(cluster.delete("ControllerRevision", "default", "web-1", propagation="Background")) is None
    cluster, _ = _cluster(lambda r: _status(409, "Conflict", "Precondition failed: UID in precondition: u0"))
    with pytest.raises(errors.Conflict):
        asyncio.run(cluster.delete("Pod", "default", "web-0", uid="u0"))


def test_patch_is_a_json_merge_patch() -> None:
    cluster, seen = _cluster(lambda r: _json(200, {"kind": "Pod", "metadata": {"name": "web-0"}}))
    asyncio.run(cluster.patch("Pod", "default", "web-0", {"metadata": {"ownerReferences": None}}))
    assert seen[0].method == "PATCH" and seen[0].headers["Content-Type"] == "application/merge-patch+json"


def test_list_follows_pages_and_returns_the_list_resource_version() -> None:
    def pages(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("continue") == "next":
            return _json(200, {"kind": "PodList", "metadata": {"resourceVersion": "40"},
                               "items": [{"metadata": {"name": "b"}}]})
        return _json(200, {"kind": "PodList", "metadata": {"resourceVersion": "40", "continue": "next"},
                           "items": [{"metadata": {"name": "a"}}]})

    cluster, seen = _cluster(pages)
    items, rv = asyncio.run(cluster.list("Pod"))
    assert [i["metadata"]["name"] for i in items] == ["a", "b"] and rv == "40"
    assert all(i["kind"] == "Pod" and i["apiVersion"] == "v1" for i in items)
    assert seen[0].url.path == "/api/v1/pods"  # every namespace


def test_watch_always_sends_a_server_timeout_and_turns_an_expired_error_event_into_gone() -> None:
    lines = [{"type": "ADDED", "object": {"kind": "Pod", "metadata": {"name": "a", "resourceVersion": "41"}}},
             {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                          "message": "too old resource version"}}]
    body = "\n".join(json.dumps(x) for x in lines).encode()
    cluster, seen = _cluster(lambda r: httpx.Response(200, content=body,
                                                      headers={"Content-Type": "application/json"}))
    got: list[str] = []

    async def go() -> None:
        async for event in cluster.list_watch("Pod", "default").watch(resource_version="40", timeout_seconds=321):
            got.append(f"{event.type} {event.obj['metadata']['name']}")

    with pytest.raises(errors.Gone):
        asyncio.run(go())
    assert got == ["ADDED a"]
    params = seen[0].url.params
    assert (params["watch"], params["resourceVersion"], params["timeoutSeconds"]) == ("true", "40", "321")


def test_times_cross_the_edge_through_the_wire_codec() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return _json(200, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {
                "name": "rollwise", "creationTimestamp": "2026-11-23T20:00:00Z"},
                "spec": {"renewTime": "2026-11-23T20:00:01.250000Z"}})
        return _json(201, json.loads(request.content))

    cluster, seen = _cluster(handler)
    lease = asyncio.run(cluster.get("Lease", "ns", "rollwise"))
    assert lease["metadata"]["creationTimestamp"] == 1795464000.0
    assert lease["spec"]["renewTime"] == 1795464001.25
    created = asyncio.run(cluster.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                          "metadata": {"name": "x", "namespace": "ns"},
                                          "spec": {"renewTime": 1795464001.25, "acquireTime": 1795464000.0}}))
    sent = json.loads(seen[1].content)["spec"]
    assert sent == {"renewTime": "2026-11-23T20:00:01.250000Z", "acquireTime": "2026-11-23T20:00:00.000000Z"}
    assert created["spec"]["renewTime"] == 1795464001.25  # the reply is decoded again
