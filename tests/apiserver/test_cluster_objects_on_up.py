"""What every cluster holds and does before a user writes anything, on ``rollwise up``: the ``default/kubernetes``
Service with its Endpoints and EndpointSlice pointing at the API server itself. Driven with the real kubectl and
lightkube."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from kubectl_support import Up, find_kubectl, start_up, stop_up
from lightkube import Client, KubeConfig
from lightkube.resources.core_v1 import Service
from lightkube.resources.discovery_v1 import EndpointSlice

pytestmark = pytest.mark.kubectl


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    kubectl = find_kubectl()
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    server = start_up(tmp_path_factory.mktemp("cluster-objects"), kubectl)
    try:
        yield server
    finally:
        stop_up(server.proc)


@pytest.fixture(scope="module")
def lk(up: Up) -> Client:
    return Client(KubeConfig.from_file(up.kubeconfig), field_manager="cluster-objects-test", trust_env=False)


def test_the_kubernetes_service_and_its_endpoints_point_at_the_api_server(up: Up, lk: Client) -> None:
    port = urlsplit(up.url).port
    shown = up.kubectl("get", "svc", "kubernetes", "--no-headers").stdout.split()
    assert shown[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"], shown
    endpoints = json.loads(up.kubectl("get", "endpoints", "kubernetes", "-o", "json").stdout)
    assert endpoints["subsets"][0]["addresses"] == [{"ip": "127.0.0.1"}]
    assert endpoints["subsets"][0]["ports"][0]["port"] == port
    svc = lk.get(Service, "kubernetes", namespace="default")
    assert svc.spec.ports[0].targetPort == port and svc.spec.selector is None
    slices = list(lk.list(EndpointSlice, namespace="default", labels={"kubernetes.io/service-name": "kubernetes"}))
    assert [(s.endpoints[0].addresses, s.ports[0].port) for s in slices] == [(["127.0.0.1"], port)]
