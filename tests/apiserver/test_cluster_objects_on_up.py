"""What every cluster holds and does before a user writes anything, on ``rollwise up``: the ``default/kubernetes``
Service with its Endpoints and EndpointSlice pointing at the API server itself, the built-in PriorityClasses, and the
default admission plugins on a new pod. Driven with the real kubectl and lightkube."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from kubectl_support import Up
from lightkube import ApiError, Client, KubeConfig
from lightkube.models.core_v1 import Container, PodSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Pod, Service
from lightkube.resources.discovery_v1 import EndpointSlice

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(shared=True),
]


@pytest.fixture(scope="module")
def lk(shared_up: Up) -> Client:
    return Client(KubeConfig.from_file(shared_up.kubeconfig), field_manager="cluster-objects-test", trust_env=False)


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


def test_a_new_pod_carries_the_default_tolerations_and_its_class_priority(up: Up, lk: Client) -> None:
    up.apply('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tolerant"},'
             ' "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}')
    tolerations = json.loads(up.kubectl("get", "pod", "tolerant", "-o", "jsonpath={.spec.tolerations}").stdout)
    assert [(t["key"], t["effect"], t["tolerationSeconds"]) for t in tolerations] == [
        ("node.kubernetes.io/not-ready", "NoExecute", 300), ("node.kubernetes.io/unreachable", "NoExecute", 300)]
    up.apply('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tolerant"},'
             ' "spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}')  # an update keeps them
    assert up.read("pod", "tolerant")["spec"]["tolerations"] == tolerations

    critical = Pod(metadata=ObjectMeta(name="critical"),
                   spec=PodSpec(containers=[Container(name="app", image="nginx:1.27")],
                                priorityClassName="system-cluster-critical"))
    assert lk.create(critical, namespace="default").spec.priority == 2000000000
    with pytest.raises(ApiError) as err:
        lk.create(Pod(metadata=ObjectMeta(name="gold"),
                      spec=PodSpec(containers=[Container(name="app", image="nginx:1.27")],
                                   priorityClassName="gold")), namespace="default")
    assert err.value.status.code == 403
    assert err.value.status.message == 'pods "gold" is forbidden: no PriorityClass with name gold was found'
    classes = up.kubectl("get", "priorityclasses", "-o", "name").stdout.split()
    assert classes == ["priorityclass.scheduling.k8s.io/system-cluster-critical",
                       "priorityclass.scheduling.k8s.io/system-node-critical"]
