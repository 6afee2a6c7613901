"""Custom resources: a CRD is served at once; its schema prunes and checks objects; its printer columns, scale and
status subresources; deleting it deletes its objects; DELETE on a collection."""

from __future__ import annotations

from typing import Any

import pytest
from server_support import AUTH, api, body, run

from rollwise.apiserver.admission.schema import prune_and_check

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.dev/v1/namespaces/default/widgets"
SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["size"], "properties": {
        "size": {"type": "integer", "minimum": 0}, "mode": {"type": "string", "enum": ["a", "b"]},
        "port": {"x-kubernetes-int-or-string": True},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "tags": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "conditions": {
        "type": "array", "items": {"type": "object", "properties": {
            "type": {"type": "string"}, "lastTransitionTime": {"type": "string", "format": "date-time"}}}}}}}}
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.example.dev"},
       "spec": {"group": "example.dev", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"]},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA},
                              "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size",
                                                                       "statusReplicasPath": ".status.replicas"}},
                              "additionalPrinterColumns": [
                                  {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]}]}}


def _widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.dev/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize(("spec", "paths"), [
    ({"size": -1}, ["spec.size"]),
    ({"size": "3"}, ["spec.size"]),
    ({"size": 1, "mode": "c"}, ["spec.mode"]),
    ({"size": 1, "port": 1.5}, ["spec.port"]),
    ({"size": 1, "tags": ["a", 2]}, ["spec.tags[1]"]),
    ({"size": 1, "labels": {"a": 1}}, ["spec.labels.a"]),
    ({}, ["spec.size"]),
], ids=["below minimum", "wrong type", "not in enum", "neither int nor string", "array item", "map value",
        "required"])
def test_schema_type_errors_name_the_field(spec: dict[str, Any], paths: list[str]) -> None:
    _, errors = prune_and_check(_widget("w", **spec), SCHEMA)
    assert [e.path for e in errors] == paths


def test_schema_prunes_undeclared_fields_but_keeps_preserved_ones() -> None:
    obj = {**_widget("w", size=1, typo=True, extra={"anything": {"goes": 1}}), "junk": 1,
           "status": {"replicas": 1, "conditions": [{"type": "Ready", "lastTransitionTime": 5.0, "zzz": 1}]}}
    pruned, errors = prune_and_check(obj, SCHEMA)
    assert errors == []
    assert pruned["spec"] == {"size": 1, "extra": {"anything": {"goes": 1}}}
    assert "junk" not in pruned and pruned["metadata"] == {"name": "w"}
    assert pruned["status"]["conditions"] == [{"type": "Ready", "lastTransitionTime": 5.0}]


def test_a_crd_serves_its_resource_at_once_and_takes_it_away_when_deleted() -> None:
    async def t() -> None:
        async with api() as (c, store):
            created = await body(await c.post(CRDS, json=CRD, headers=AUTH))
            conditions = {x["type"]: x["status"] for x in created["status"]["conditions"]}
            assert conditions == {"NamesAccepted": "True", "Established": "True"}
            group = await body(await c.get("/apis/example.dev/v1", headers=AUTH))
            assert {r["name"] for r in group["resources"]} == {"widgets", "widgets/status", "widgets/scale"}
            resp = await c.post(WIDGETS, json=_widget("w1", size=2, typo=1), headers=AUTH)
            assert resp.status == 201
            assert (await body(resp))["spec"] == {"size": 2}
            bad = await c.post(WIDGETS, json=_widget("w2", size="two"), headers=AUTH)
            status = await body(bad)
            assert (bad.status, status["details"]["causes"][0]["field"]) == (422, "spec.size")
            table = await body(await c.get(WIDGETS, headers={**AUTH, "Accept": "application/json;as=Table;v=v1;"
                                                                            "g=meta.k8s.io"}))
            assert [col["name"] for col in table["columnDefinitions"]] == ["Name", "Size"]
            assert table["rows"][0]["cells"] == ["w1", 2]
            scale = await body(await c.patch(f"{WIDGETS}/w1/scale", json={"spec": {"replicas": 5}},
                                             headers={**AUTH, "Content-Type": "application/merge-patch+json"}))
            assert scale["spec"]["replicas"] == 5
            widget = await body(await c.get(f"{WIDGETS}/w1", headers=AUTH))
            assert widget["spec"]["size"] == 5
            smp = await c.patch(f"{WIDGETS}/w1", json={"spec": {"size": 1}},
                                headers={**AUTH, "Content-Type": "application/strategic-merge-patch+json"})
            assert smp.status == 415
            assert (await c.delete(f"{CRDS}/widgets.example.dev", headers=AUTH)).status == 200
            assert (await c.get(WIDGETS, headers=AUTH)).status == 404
            assert store.cluster.list("Widget.example.dev") == []
    run(t)


def test_delete_on_a_collection_deletes_what_the_selector_matches() -> None:
    async def t() -> None:
        async with api() as (c, _):
            cms = "/api/v1/namespaces/default/configmaps"
            for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
                await c.post(cms, json={"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": name, "labels": {"app": app}}}, headers=AUTH)
            deleted = await body(await c.delete(f"{cms}?labelSelector=app%3Dx", headers=AUTH))
            assert sorted(i["metadata"]["name"] for i in deleted["items"]) == ["a", "b"]
            left = await body(await c.get(cms, headers=AUTH))
            assert [i["metadata"]["name"] for i in left["items"]] == ["c"]
    run(t)
