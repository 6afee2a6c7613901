"""A strategic merge patch on ``rollwise up`` orders lists as kube-apiserver does (apiserver/storage/smp.py): a
container only the patch has goes before the live ones, and ``$setElementOrder`` (what ``kubectl apply`` sends) puts it
where the manifest has it. Driven with the real kubectl and lightkube."""

from __future__ import annotations

import json

import pytest
from kubectl_support import Up
from lightkube import Client, KubeConfig
from lightkube.resources.apps_v1 import Deployment
from lightkube.types import PatchType

pytestmark = pytest.mark.kubectl

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"},
                                                            {"name": "log", "image": "busybox:1.36"}]}}}}


def _containers(obj: dict) -> list[str]:  # type: ignore[type-arg]
    return [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]]


def test_a_container_added_by_a_strategic_patch_goes_where_kube_apiserver_puts_it(up: Up) -> None:
    up.apply(json.dumps(DEPLOYMENT))
    up.kubectl("patch", "deployment", "web", "--type=strategic", "-p",
               '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"envoy:1"}]}}}}')
    assert _containers(up.read("deployment", "web")) == ["side", "app", "log"]

    lk = Client(KubeConfig.from_file(up.kubeconfig), field_manager="smp-test", trust_env=False)
    patched = lk.patch(Deployment, "web", {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "app"}, {"name": "proxy"}, {"name": "log"}, {"name": "side"}],
        "containers": [{"name": "proxy", "image": "envoy:2"}]}}}}, namespace="default",
        patch_type=PatchType.STRATEGIC)
    assert [c.name for c in patched.spec.template.spec.containers] == ["app", "proxy", "log", "side"]

    manifest = json.loads(json.dumps(DEPLOYMENT))
    manifest["spec"]["template"]["spec"]["containers"].insert(1, {"name": "mid", "image": "busybox:1.36"})
    up.apply(json.dumps(manifest))  # client-side apply: the patch carries $setElementOrder from the manifest
    # The manifest's containers in its order; those only the server has (kubectl never applied them) go in
    # among them where the live list had them.
    assert _containers(up.read("deployment", "web")) == ["app", "mid", "proxy", "log", "side"]
