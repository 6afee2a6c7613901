"""What lightkube's models drop from a kubeconfig's cluster entry, honoured as kubectl honours it: ``tls-server-name``
(the name the server's certificate is checked against) and ``proxy-url``, else the proxy environment, where a
loopback server is never proxied and ``NO_PROXY`` is read as Go reads it."""

from __future__ import annotations

import asyncio
import base64
import ssl
from pathlib import Path

import pytest
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec
from tls_fixtures import issue, key_pem, pem, serving
from unusable_kubeconfigs import kubeconfig

from rollwise.api import errors
from rollwise.cli.kubeconfig import ClientConfig, ConfigProblem, client_config
from rollwise.cluster.client.kube import KubeCluster

FAR = "http://10.255.0.1:6443"
"""A server address that is not loopback (never dialled: the tests that use it go through a proxy)."""


async def _lease_name(config: ClientConfig) -> str:
    client = config.rest_client()
    try:
        return str((await KubeCluster(client).get("Lease", "ns", "x"))["metadata"]["name"])
    finally:
        await client.close()


def test_tls_server_name_is_the_name_the_certificate_is_checked_against(tmp_path: Path) -> None:
    ca_key, server_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(2))
    ca = issue("test-ca", ca_key, None, ca=True)
    (tmp_path / "server.pem").write_bytes(pem(issue("api", server_key, (ca.subject, ca_key), dns="api.internal"))
                                          + key_pem(server_key))
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(str(tmp_path / "server.pem"))

    async def lease(_: web.Request) -> web.Response:
        return web.json_response({"kind": "Lease", "metadata": {"name": "checked-as-api.internal"}})

    async def go() -> None:
        async with serving(lease, server_tls) as url:
            ca_data = base64.b64encode(pem(ca)).decode()
            named = client_config(str(kubeconfig(
                tmp_path, f"server: '{url}', certificate-authority-data: {ca_data}, tls-server-name: api.internal",
                "token: t")), None)
            assert await _lease_name(named) == "checked-as-api.internal"
            unnamed = client_config(str(kubeconfig(tmp_path, f"server: '{url}', certificate-authority-data: {ca_data}",
                                                   "token: t")), None)
            with pytest.raises(errors.ApiStatusError) as refused:  # the certificate is not for 127.0.0.1
                await _lease_name(unnamed)
            assert refused.value.code == 503 and "certificate" in refused.value.message.lower()

    asyncio.run(go())


@pytest.mark.parametrize("source", ["proxy-url", "environment"])
def test_a_proxy_from_the_kubeconfig_or_the_environment_carries_the_requests(
        source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []

    async def proxy(request: web.Request) -> web.Response:
        seen.append((request.headers.get("Host", ""), request.path))  # absolute-form: for the server behind it
        return web.json_response({"kind": "Lease", "metadata": {"name": "via-proxy"}})

    async def go() -> None:
        async with serving(proxy) as proxy_url:
            for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy"):
                monkeypatch.delenv(name, raising=False)
            if source == "environment":
                monkeypatch.setenv("HTTP_PROXY", proxy_url)
                cluster = f"server: '{FAR}'"
            else:
                cluster = f"server: '{FAR}', proxy-url: '{proxy_url}'"
            config = client_config(str(kubeconfig(tmp_path, cluster, "token: t")), None)
            assert config.proxy == proxy_url
            assert await _lease_name(config) == "via-proxy"

    asyncio.run(go())
    assert seen == [("10.255.0.1:6443", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/x")]


@pytest.mark.parametrize(("server", "no_proxy", "proxied"), [
    ("http://127.0.0.1:6443", "", False),  # loopback: never
    ("http://localhost:6443", "", False),
    ("http://[::1]:6443", "", False),
    (FAR, "", True),
    (FAR, "*", False),
    (FAR, "10.0.0.0/8", False),
    (FAR, "10.255.0.1", False),
    (FAR, "10.255.0.1:6443", False),
    (FAR, "10.255.0.1:443", True),  # another port
    ("http://api.corp.example:6443", "corp.example", False),  # a domain covers its subdomains
    ("http://api.corp.example:6443", ".corp.example", False),
    ("http://corp.example:6443", ".corp.example", True),  # a leading dot: subdomains only
    ("http://notcorp.example:6443", "corp.example", True),
])
def test_no_proxy_and_loopback_are_read_as_go_reads_them(server: str, no_proxy: str, proxied: bool, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.corp.example:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    config = client_config(str(kubeconfig(tmp_path, f"server: '{server}'", "token: t")), None)
    assert (config.proxy == "http://proxy.corp.example:3128") is proxied


def test_a_socks_proxy_is_refused_in_one_line(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path, f"server: '{FAR}', proxy-url: 'socks5://127.0.0.1:1080'", "token: t")
    with pytest.raises(ConfigProblem) as refused:
        client_config(str(path), None)
    assert str(refused.value) == (f"--kubeconfig {path}: context x: cluster proxy-url 'socks5://127.0.0.1:1080': "
                                  "only http:// and https:// proxies are supported")
