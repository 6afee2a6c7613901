"""Field selectors on ``rollwise up`` read as kube-apiserver reads them (apimachinery's ``fields.ParseSelector``):
an empty term is skipped, ``!=`` and ``==`` work, a value may escape a comma, and a bad escape is a 400 in its words.
Driven with the real kubectl and the official Python client."""

from __future__ import annotations

import pytest
from kubectl_support import Up
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

pytestmark = pytest.mark.kubectl

PODS = """apiVersion: v1
kind: Pod
metadata: {name: a}
spec: {containers: [{name: app, image: "nginx:1.27"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec: {containers: [{name: app, image: "nginx:1.27"}]}
"""


def test_field_selectors_with_empty_terms_negation_and_escapes_list_as_on_a_cluster(up: Up) -> None:
    up.apply(PODS)

    def names(selector: str) -> list[str]:
        return up.kubectl("get", "pods", "--field-selector", selector, "-o", "name").stdout.split()

    assert names("metadata.name=a,") == ["pod/a"]
    assert names(",metadata.name==b,,") == ["pod/b"]
    assert names("metadata.name!=a") == ["pod/b"]
    assert names(r"metadata.name=a\,b") == []
    refused = up.kubectl("get", "pods", "--field-selector", "metadata.name=a\\", check=False)
    assert refused.returncode == 1 and refused.stdout == ""
    assert "invalid field selector: invalid escape sequence" in refused.stderr, refused.stderr

    core = k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=str(up.kubeconfig)))
    listed = core.list_namespaced_pod("default", field_selector="metadata.name=b,")
    assert [p.metadata.name for p in listed.items] == ["b"]
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod("default", field_selector="metadata.name=a=b")
    assert err.value.status == 400
    assert "unescaped character in value" in str(err.value.body)
