"""The OpenAPI documents ``rollwise up`` serves describe every field of the built-in kinds
(apiserver/kinds/openapi_models.py), so ``kubectl explain`` answers as on a cluster; and ``kubectl diff`` after an
unchanged apply shows nothing. Driven in-process over HTTP, with the real kubectl, and with the official Python
client."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from kubectl_support import Up, statefulset
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from server_support import TOKEN, api, body, run

from rollwise.apiserver.storage.store import ApiStore

AUTH = {"Authorization": f"Bearer {TOKEN}"}
STS = statefulset("web", image="nginx:1.27", replicas=1, claims=False)


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
    return doc["components"]["schemas"][ref.rsplit("/", 1)[-1]] if ref else schema


def test_the_v3_documents_describe_each_field_of_a_built_in_kind_and_the_v2_one_too() -> None:
    async def t() -> None:
        async with api() as (c, _store):
            root = await body(await c.get("/openapi/v3/", headers=AUTH))
            assert "apis/apps/v1" in root["paths"]
            doc = await body(await c.get("/openapi/v3/apis/apps/v1", headers=AUTH))
            sts = next(s for s in doc["components"]["schemas"].values()
                       if s.get("x-kubernetes-group-version-kind") == [{"group": "apps", "version": "v1",
                                                                         "kind": "StatefulSet"}])
            spec = _resolve(doc, sts["properties"]["spec"])
            strategy = _resolve(doc, spec["properties"]["updateStrategy"])
            assert strategy["properties"]["type"]["type"] == "string"
            assert "RollingUpdate" in strategy["properties"]["type"]["description"]
            partition = _resolve(doc, strategy["properties"]["rollingUpdate"])["properties"]["maxUnavailable"]
            assert partition == {**partition, "x-kubernetes-int-or-string": True}
            template = _resolve(doc, spec["properties"]["template"])
            pod_spec = _resolve(doc, template["properties"]["spec"])
            assert "containers" in pod_spec["required"]  # the models a kind reaches are in its document

            v2 = await c.get("/openapi/v2", headers={**AUTH, "Accept": "application/json"})
            definitions = (await body(v2))["definitions"]
            assert definitions["io.k8s.api.apps.v1.StatefulSetSpec"]["properties"]["updateStrategy"]["$ref"] == \
                "#/definitions/io.k8s.api.apps.v1.StatefulSetUpdateStrategy"
            protobuf = await c.get("/openapi/v2", headers={
                **AUTH, "Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
            assert protobuf.status == 404  # kubectl's fallback takes that as no v2 document
    run(t)


pytestmark = pytest.mark.up(shared=True)


@pytest.mark.kubectl
def test_kubectl_explain_answers_for_the_fields_of_every_served_built_in_kind(up: Up) -> None:
    shown = up.kubectl("explain", "statefulset.spec.updateStrategy").stdout
    assert "FIELD: updateStrategy <StatefulSetUpdateStrategy>" in shown and "rollingUpdate" in shown
    assert "<RollingUpdateStatefulSetStrategy>" in up.kubectl("explain", "sts.spec.updateStrategy.rollingUpdate",
                                                                "--recursive").stdout
    assert "FIELD: limits" in up.kubectl("explain", "pod.spec.containers.resources.limits").stdout
    listed = [line.split() for line in up.kubectl("api-resources", "--no-headers").stdout.splitlines()]
    unexplained = []
    for row in listed:
        name, api_version = row[0], row[-3]
        if api_version.split("/")[0] in ("apps.rollwise.dev", "authorization.k8s.io", "authentication.k8s.io"):
            continue  # the CRD's own schema (tested with it); reviews are answered, never stored
        done = up.kubectl("explain", name, f"--api-version={api_version}", "--recursive", check=False)
        if done.returncode != 0 or "FIELDS:" not in done.stdout:
            unexplained.append((name, api_version, done.stderr.strip()))
    assert unexplained == []


def test_reapplying_a_port_without_its_protocol_keeps_the_one_port_the_server_defaulted() -> None:
    store = ApiStore()
    try:
        statefulsets = store.registry.find("apps", "v1", "statefulsets")
        assert statefulsets is not None
        config = yaml.safe_load(STS)
        for _ in range(2):
            obj, _created = store.patch(statefulsets, "default", "web", "application/apply-patch+yaml", config,
                                        actor="admin", manager="kubectl")
        ports = obj["spec"]["template"]["spec"]["containers"][0]["ports"]
        assert ports == [{"containerPort": 80, "name": "http", "protocol": "TCP"}]
    finally:
        store.close()


def test_applying_the_port_another_manager_created_with_the_same_value_is_no_conflict() -> None:
    # The official client's e2e test_create_apps_deployment_from_yaml_with_apply_is_idempotent: created, then
    # applied unchanged by another manager; the port's key is read with its default protocol on both sides.
    store = ApiStore()
    try:
        statefulsets = store.registry.find("apps", "v1", "statefulsets")
        assert statefulsets is not None
        store.create(statefulsets, "default", yaml.safe_load(STS), actor="admin", manager="OpenAPI-Generator")
        obj, _ = store.patch(statefulsets, "default", "web", "application/apply-patch+yaml", yaml.safe_load(STS),
                             actor="admin", manager="python-client")
        assert len(obj["spec"]["template"]["spec"]["containers"][0]["ports"]) == 1
    finally:
        store.close()


@pytest.mark.kubectl
def test_kubectl_diff_after_an_unchanged_apply_shows_nothing(up: Up) -> None:
    up.apply(STS, "--server-side")
    # Settled first: a diff reads the live object and then asks for a dry run, and a status the controller writes
    # in between is a difference on any cluster.
    up.kubectl("rollout", "status", "sts/web", "--timeout=120s")
    done = up.kubectl("diff", "-f", "-", stdin=STS, check=False)
    assert (done.returncode, done.stdout) == (0, "")
    assert up.kubectl("diff", "--server-side", "-f", "-", stdin=STS, check=False).returncode == 0
    up.apply(STS)  # client-side apply over it, then diff again
    assert up.kubectl("diff", "-f", "-", stdin=STS, check=False).returncode == 0
    changed = up.kubectl("diff", "-f", "-", stdin=STS.replace("replicas: 1", "replicas: 2"), check=False)
    assert changed.returncode == 1 and "+  replicas: 2" in changed.stdout


@pytest.mark.kubectl
def test_the_python_client_reads_the_v2_document(up: Up) -> None:
    client = k8s_config.new_client_from_config(config_file=str(up.kubeconfig))
    # A raw call carries no bearer token: the kubeconfig's client certificate authenticates it.
    reply = client.call_api("GET", f"{client.configuration.host}/openapi/v2",
                            header_params={"Accept": "application/json"})
    assert reply.status == 200
    definitions = json.loads(reply.read())["definitions"]
    kinds = {gvk["kind"] for d in definitions.values() for gvk in d.get("x-kubernetes-group-version-kind", [])}
    assert {"Pod", "StatefulSet", "Service", "PersistentVolumeClaim", "Lease", "Deployment"} <= kinds
    assert isinstance(k8s.VersionApi(client).get_code().git_version, str)
