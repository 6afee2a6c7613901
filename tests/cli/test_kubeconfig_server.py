"""A kubeconfig read as kubectl reads it: ``host:port`` without a scheme is https when the cluster's TLS is
configured and http otherwise (client-go's ``DefaultServerURL``), a URL with a scheme is kept as written, and a
context with no user is anonymous."""

from __future__ import annotations

from pathlib import Path

import pytest
from unusable_kubeconfigs import kubeconfig

from rollwise.cli.kubeconfig import client_config
from rollwise.cluster.client.rest import RestClient


@pytest.mark.parametrize(("cluster", "user", "url"), [
    ("server: '127.0.0.1:6443'", "token: t", "http://127.0.0.1:6443"),
    ("server: 'localhost:6443'", "token: t", "http://localhost:6443"),
    ("server: '127.0.0.1:6443', insecure-skip-tls-verify: true", "token: t", "https://127.0.0.1:6443"),
    ("server: 'k8s.example.com'", "token: t", "http://k8s.example.com"),
    ("server: 'https://k8s.example.com/k8s/clusters/c-1'", "token: t", "https://k8s.example.com/k8s/clusters/c-1"),
    ("server: 'http://[::1]:8080'", "token: t", "http://[::1]:8080"),
])
def test_a_server_without_a_scheme_gets_the_one_its_tls_settings_imply(cluster: str, user: str, url: str,
                                                                      tmp_path: Path) -> None:
    assert client_config(str(kubeconfig(tmp_path, cluster, user)), None).single.cluster.server == url


def test_a_context_without_a_user_is_anonymous_and_the_client_builds(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                    "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:8080'}}]\n"
                    "contexts: [{name: x, context: {cluster: c}}]\n")
    config = client_config(str(path), None)
    assert config.single.user is not None and config.single.user.token is None
    assert isinstance(config.rest_client(), RestClient)
