"""The direct API client (``cluster/client/rest.py``) under ``KubeCluster``, against an in-process aiohttp server:
paths, bodies, errors read from the Status body, one metrics observation per request, auth as the kubeconfig gives it
(a token, a rotated token file, a client certificate) and a connection that drops mid-request.

The same client against ``rollwise up`` is in ``tests/apiserver/test_rest_on_up.py``.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import json
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec
from lightkube.config.kubeconfig import KubeConfig
from prometheus_client import CollectorRegistry
from tls_fixtures import Handler, issue, key_pem, pem, serving

from rollwise.api import errors
from rollwise.cli.client_metrics import RequestMetrics
from rollwise.cluster.client.kube import KubeCluster
from rollwise.cluster.client.rest import RestClient, api_path, unreachable

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default"},
       "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}


def _config(url: str, user: dict[str, Any], cluster: dict[str, Any] | None = None) -> Any:
    return KubeConfig.from_dict({
        "current-context": "t", "clusters": [{"name": "t", "cluster": {"server": url, **(cluster or {})}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "t", "context": {"cluster": "t", "user": "u"}}]}).get()


def _status(code: int, reason: str, message: str = "") -> web.Response:
    return web.json_response({"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": code,
                              "reason": reason, "message": message or reason}, status=code)


def run_against(handler: Handler, body: Callable[[KubeCluster], Awaitable[Any]], *, user: dict[str, Any] | None = None,
                observe: Any = None, set_group: str = "apps.rollwise.dev") -> Any:
    async def go() -> Any:
        async with serving(handler) as url:
            client = RestClient.from_config(_config(url, user or {"token": "op-a"}), observe=observe)
            try:
                return await body(KubeCluster(client, set_group=set_group))
            finally:
                await client.close()
    return asyncio.run(go())


@pytest.mark.parametrize(("args", "path"), [
    (("", "v1", "pods", "default"), "/api/v1/namespaces/default/pods"),
    (("", "v1", "pods", None), "/api/v1/pods"),
    (("", "v1", "pods", "ns", "web-0"), "/api/v1/namespaces/ns/pods/web-0"),
    (("apps", "v1", "statefulsets", "ns", "web", "status"), "/apis/apps/v1/namespaces/ns/statefulsets/web/status"),
    (("apps.rollwise.dev", "v1alpha1", "statefulsets", "ns", "web"),
     "/apis/apps.rollwise.dev/v1alpha1/namespaces/ns/statefulsets/web"),
    (("coordination.k8s.io", "v1", "leases", ""), "/apis/coordination.k8s.io/v1/leases"),
])
def test_paths_are_built_from_the_resource_row(args: tuple[Any, ...], path: str) -> None:
    assert api_path(*args) == path


def test_each_verb_sends_its_method_path_content_type_and_body() -> None:
    seen: list[tuple[str, str, str, Any]] = []

    async def handler(request: web.Request) -> web.Response:
        raw = await request.read()
        body = json.loads(raw) if raw else None
        seen.append((request.method, request.path, request.headers.get("Content-Type", ""), body))
        if request.method == "DELETE":
            return web.json_response({"kind": "Status", "status": "Success"})
        reply = body if isinstance(body, dict) and "metadata" in body else {"metadata": {"name": "x"}}
        return web.json_response({**reply, "metadata": {**reply["metadata"], "resourceVersion": "7"}})

    async def body(kube: KubeCluster) -> list[Any]:
        sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "ns"}}
        return [await kube.create(POD), await kube.update(POD), await kube.update_status(sts),
                await kube.patch("Pod", "default", "web-0", {"metadata": {"labels": {"a": "b"}}}),
                await kube.get("StatefulSet", "ns", "web"),
                await kube.delete("Pod", "default", "web-0", uid="u1", grace_period_seconds=0,
                                  propagation="Background")]

    replies = run_against(handler, body)
    assert [(m, p, t) for m, p, t, _ in seen] == [
        ("POST", "/api/v1/namespaces/default/pods", "application/json"),
        ("PUT", "/api/v1/namespaces/default/pods/web-0", "application/json"),
        ("PUT", "/apis/apps/v1/namespaces/ns/statefulsets/web/status", "application/json"),
        ("PATCH", "/api/v1/namespaces/default/pods/web-0", "application/merge-patch+json"),
        ("GET", "/apis/apps.rollwise.dev/v1alpha1/namespaces/ns/statefulsets/web", ""),
        ("DELETE", "/api/v1/namespaces/default/pods/web-0", "application/json"),
    ]
    assert seen[0][3]["spec"] == POD["spec"] and seen[3][3] == {"metadata": {"labels": {"a": "b"}}}
    assert seen[5][3] == {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "u1"},
                          "gracePeriodSeconds": 0, "propagationPolicy": "Background"}
    assert replies[0]["metadata"]["resourceVersion"] == "7" and replies[0]["kind"] == "Pod"
    assert replies[4]["kind"] == "StatefulSet" and replies[4]["apiVersion"] == "apps.rollwise.dev/v1alpha1"
    assert replies[5] is None  # a Status reply: gone


def test_a_delete_that_leaves_the_object_terminating_returns_it_with_times_decoded() -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.json_response({**POD, "metadata": {**POD["metadata"], "resourceVersion": "12",
                                                      "deletionTimestamp": "2026-11-23T20:00:00Z"}})

    out = run_against(handler, lambda kube: kube.delete("Pod", "default", "web-0", uid="u1"))
    assert out["metadata"]["resourceVersion"] == "12" and out["metadata"]["deletionTimestamp"] == 1795464000.0


@pytest.mark.parametrize(("reply", "error", "code", "reason"), [
    (lambda: _status(404, "NotFound"), errors.NotFound, 404, "NotFound"),
    (lambda: _status(409, "AlreadyExists"), errors.AlreadyExists, 409, "AlreadyExists"),
    (lambda: _status(409, "Conflict", "the object has been modified"), errors.Conflict, 409, "Conflict"),
    (lambda: _status(410, "Expired"), errors.Gone, 410, "Gone"),
    (lambda: _status(422, "Invalid"), errors.Invalid, 422, "Invalid"),
    (lambda: _status(403, "Forbidden"), errors.ApiStatusError, 403, "Forbidden"),
    (lambda: _status(429, "TooManyRequests"), errors.ApiStatusError, 429, "TooManyRequests"),
    (lambda: _status(500, "InternalError"), errors.ApiStatusError, 500, "InternalError"),
    (lambda: web.Response(status=502, text="bad gateway"), errors.ApiStatusError, 502, "InternalError"),
], ids=["404", "409-exists", "409-conflict", "410", "422", "403", "429", "500", "502-not-json"])
def test_a_failure_is_the_error_its_status_body_names(reply: Callable[[], web.Response], error: type, code: int,
                                                       reason: str) -> None:
    async def handler(request: web.Request) -> web.Response:
        return reply()

    with pytest.raises(error) as caught:
        run_against(handler, lambda kube: kube.get("Pod", "default", "web-0"))
    assert (caught.value.code, caught.value.reason) == (code, reason)
    if code == 502:
        assert "bad gateway" in str(caught.value)
    elif code == 409 and reason == "Conflict":
        assert "the object has been modified" in str(caught.value)


def test_a_connection_dropped_mid_request_and_a_refused_one_are_service_unavailable() -> None:
    async def drop(request: web.Request) -> web.Response:
        await request.read()
        assert request.transport is not None
        request.transport.abort()  # the API server goes away with the request in flight
        return web.Response()

    with pytest.raises(errors.ApiStatusError) as caught:
        run_against(drop, lambda kube: kube.create(POD))
    assert (caught.value.code, caught.value.reason) == (503, "ServiceUnavailable")

    async def refused() -> None:
        client = RestClient("http://127.0.0.1:1")
        try:
            await KubeCluster(client).get("Lease", "ns", "rollwise")
        finally:
            await client.close()

    with pytest.raises(errors.ApiStatusError) as caught:
        asyncio.run(refused())
    assert (caught.value.code, caught.value.reason) == (503, "ServiceUnavailable")


def test_every_reply_is_counted_once_by_the_shared_metrics_rule() -> None:
    registry = CollectorRegistry()
    metrics = RequestMetrics(registry)

    async def handler(request: web.Request) -> web.Response:
        return _status(404, "NotFound") if request.method == "GET" else web.json_response(await request.json())

    async def body(kube: KubeCluster) -> None:
        await kube.create(POD)
        await kube.create(POD)
        with pytest.raises(errors.NotFound):
            await kube.get("Pod", "default", "web-0")

    run_against(handler, body, observe=metrics.observe)

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert value("rest_client_requests_total", code="200", method="POST", host="127.0.0.1") == 2
    assert value("rest_client_requests_total", code="404", method="GET", host="127.0.0.1") == 1
    assert value("rest_client_request_duration_seconds_count", verb="POST", host="127.0.0.1") == 2


def test_the_bearer_token_is_sent_and_a_rotated_token_file_is_read_again_after_a_401(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("old\n")
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        seen.append(auth)
        if auth != "Bearer new":
            return _status(401, "Unauthorized")
        return web.json_response({"kind": "Lease", "metadata": {"name": "rollwise"}})

    async def body(kube: KubeCluster) -> None:
        with pytest.raises(errors.ApiStatusError) as caught:
            await kube.get("Lease", "ns", "rollwise")  # "old" is refused; the file still says "old"
        assert caught.value.code == 401
        token_file.write_text("new\n")  # the kubelet rotates the projected token
        await kube.get("Lease", "ns", "rollwise")
        await kube.get("Lease", "ns", "rollwise")

    observed: list[int] = []
    run_against(handler, body, user={"tokenFile": str(token_file)},
                observe=lambda method, host, code, seconds: observed.append(code))
    assert seen == ["Bearer old", "Bearer old", "Bearer old", "Bearer new", "Bearer new"]
    assert observed == [401, 401, 401, 200, 200]  # the retry after a 401 is a request of its own

    static: list[str] = []

    async def record(request: web.Request) -> web.Response:
        static.append(request.headers.get("Authorization", ""))
        return web.json_response({"kind": "Lease", "metadata": {"name": "rollwise"}})

    run_against(record, lambda kube: kube.get("Lease", "ns", "rollwise"))
    assert static == ["Bearer op-a"]


def _exec_user(command: str) -> dict[str, Any]:
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": command}}


def test_an_exec_plugin_gives_the_token_and_one_that_fails_or_is_missing_is_unauthorized_not_unreachable(
        tmp_path: Path) -> None:
    seen: list[str] = []

    async def record(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        return web.json_response({"kind": "Lease", "metadata": {"name": "rollwise"}})

    plugin = tmp_path / "plugin"
    plugin.write_text('#!/bin/sh\necho \'{"apiVersion": "client.authentication.k8s.io/v1beta1", '
                      '"kind": "ExecCredential", "status": {"token": "from-exec"}}\'\n')
    plugin.chmod(0o755)
    run_against(record, lambda kube: kube.get("Lease", "ns", "rollwise"), user=_exec_user(str(plugin)))
    assert seen == ["Bearer from-exec"]

    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\necho 'token expired: run login' >&2\nexit 3\n")
    failing.chmod(0o755)
    for command, said in [(str(failing), "token expired: run login"), (str(tmp_path / "gone"), "No such file")]:
        async def body(kube: KubeCluster, said: str = said) -> None:
            with pytest.raises(errors.CredentialsUnavailable) as caught:
                await kube.get("Lease", "ns", "rollwise")
            assert caught.value.code == 401 and caught.value.message.startswith("getting credentials: ")
            assert said in caught.value.message

        run_against(record, body, user=_exec_user(command))
    assert seen == ["Bearer from-exec"], "nothing is sent without credentials"


def test_the_client_certificate_and_ca_from_the_kubeconfig_are_used(tmp_path: Path) -> None:
    ca_key, server_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    ca = issue("test-ca", ca_key, None, ca=True)
    server_cert = issue("127.0.0.1", server_key, (ca.subject, ca_key), ip="127.0.0.1")
    client_cert = issue("op-cert", client_key, (ca.subject, ca_key))
    (tmp_path / "ca.pem").write_bytes(pem(ca))
    (tmp_path / "server.pem").write_bytes(pem(server_cert) + key_pem(server_key))
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(tmp_path / "ca.pem"))
    server_tls.load_cert_chain(str(tmp_path / "server.pem"))
    server_tls.verify_mode = ssl.CERT_REQUIRED  # no client certificate, no handshake

    async def whoami(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(pair[0] for pair in (peer or {}).get("subject", ()))
        return web.json_response({"kind": "Lease", "metadata": {"name": subject.get("commonName", "")}})

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    async def go() -> str:
        async with serving(whoami, server_tls) as url:
            config = _config(url, {"client-certificate-data": b64(pem(client_cert)),
                                   "client-key-data": b64(key_pem(client_key))},
                             {"certificate-authority-data": b64(pem(ca))})
            client = RestClient.from_config(config)
            try:
                lease = await KubeCluster(client).get("Lease", "ns", "x")
                return str(lease["metadata"]["name"])
            finally:
                await client.close()

    assert asyncio.run(go()) == "op-cert"


def test_list_follows_pages_with_the_selector_and_watch_turns_an_expired_error_event_into_gone() -> None:
    queries: list[dict[str, str]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        queries.append(dict(request.query))
        if request.query.get("watch") == "true":
            resp = web.StreamResponse()
            await resp.prepare(request)
            for event in ({"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "41",
                                                                    "creationTimestamp": "2026-11-23T20:00:00Z"}}},
                          {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                                       "message": "too old resource version"}}):
                await resp.write(json.dumps(event).encode() + b"\n")
            return resp
        if request.query.get("continue") == "next":
            return web.json_response({"kind": "PodList", "metadata": {"resourceVersion": "40"},
                                      "items": [{"metadata": {"name": "b"}}]})
        return web.json_response({"kind": "PodList", "metadata": {"resourceVersion": "40", "continue": "next"},
                                  "items": [{"metadata": {"name": "a"}}]})

    async def body(kube: KubeCluster) -> tuple[list[Any], str, list[str]]:
        source = kube.list_watch("Pod", "default", labels={"app": "web", "gone": False})
        listed = await source.list(resource_version="")
        got: list[str] = []
        with pytest.raises(errors.Gone):
            async for event in source.watch(resource_version="40", timeout_seconds=321):
                got.append(f"{event.type} {event.obj['metadata']['name']} {event.obj['metadata']['creationTimestamp']}")
        return listed.items, listed.resource_version, got

    items, rv, got = run_against(handler, body)
    assert [i["metadata"]["name"] for i in items] == ["a", "b"] and rv == "40"
    assert all(i["kind"] == "Pod" and i["apiVersion"] == "v1" for i in items)
    assert got == ["ADDED a 1795464000.0"]
    assert queries[0] == {"limit": "500", "labelSelector": "app=web,!gone"}
    assert queries[1]["continue"] == "next"
    assert queries[2] == {"watch": "true", "timeoutSeconds": "321", "resourceVersion": "40",
                          "labelSelector": "app=web,!gone"}


@pytest.mark.parametrize(("server", "said"), [
    ("http://127.0.0.1:1", "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or "
                           "port?"),
    ("", "The connection to the API server was refused - did you specify the right host or port?")])
def test_a_refused_connection_is_named_as_kubectl_names_it_with_or_without_the_server(server: str, said: str) -> None:
    refused = OSError(errno.ECONNREFUSED, "Connect call failed")
    caught = unreachable(refused, server)
    assert isinstance(caught, errors.Unreachable) and (caught.code, caught.reason) == (503, "ServiceUnavailable")
    assert caught.message == said
    assert unreachable(TimeoutError(), "").message == "Unable to connect to the API server: TimeoutError"
