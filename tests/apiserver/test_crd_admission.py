"""Any CRD a user installs is served as kube-apiserver serves it: defaults, pruning, types, then its CEL rules
(transition rules with oldSelf, ratcheting), a 422 whose details.causes name the field and carry the rule's
message; a rule that does not compile refuses the CRD. The project's own kind goes the same way, with no rollwise
validator at admission."""

from __future__ import annotations

import copy
from typing import Any

from server_support import AUTH, api, body, run

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
RANGES = "/apis/example.dev/v1/namespaces/default/ranges"
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"spec": {
    "type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.min <= self.max", "message": "min must not exceed max", "fieldPath": ".min"},
        {"rule": "self.owner == oldSelf.owner", "message": "owner is immutable", "reason": "FieldValueForbidden"},
        {"rule": "self.max - self.min < 1000", "messageExpression": "'the range is ' + string(self.max - self.min) "
                                                                    "+ ' wide'"}],
    "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}, "owner": {"type": "string"},
                   "mode": {"type": "string", "default": "fast"},
                   "tags": {"type": "array", "items": {"type": "string",
                                                      "x-kubernetes-validations": [{"rule": "self.size() <= 3"}]}}}}}}


def _crd(schema: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ranges.example.dev"},
            "spec": {"group": "example.dev", "scope": "Namespaced", "names": {"kind": "Range", "plural": "ranges"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def _range(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.dev/v1", "kind": "Range", "metadata": {"name": name}, "spec": spec}


def test_a_cel_rule_refuses_with_422_and_its_message_in_the_causes_at_its_field_path() -> None:
    async def go() -> None:
        async with api() as (client, _store):
            assert (await client.post(CRDS, json=_crd(SCHEMA), headers=AUTH)).status == 201
            resp = await client.post(RANGES, json=_range("r", min=5, max=1, owner="a", extra=1), headers=AUTH)
            status = await body(resp)
            assert resp.status == 422 and status["reason"] == "Invalid"
            assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.min",
                                                    "message": 'Invalid value: "object": min must not exceed max'}]
            assert 'Range.example.dev "r" is invalid: spec.min: Invalid value: "object": min must not exceed max' \
                in status["message"]
            wide = await body(await client.post(RANGES, json=_range("w", min=0, max=5000, owner="a"), headers=AUTH))
            assert wide["details"]["causes"][0]["message"].endswith("the range is 5000 wide")
            item = await body(await client.post(RANGES, json=_range("t", min=0, max=1, owner="a",
                                                                    tags=["ok", "long"]), headers=AUTH))
            assert item["details"]["causes"][0]["field"] == "spec.tags[1]"
            assert "failed rule: self.size() <= 3" in item["details"]["causes"][0]["message"]
    run(go)


def test_defaults_and_pruning_then_a_transition_rule_on_update() -> None:
    async def go() -> None:
        async with api() as (client, _store):
            await client.post(CRDS, json=_crd(SCHEMA), headers=AUTH)
            resp = await client.post(RANGES, json=_range("r", min=1, max=2, owner="a", junk=True), headers=AUTH)
            created = await body(resp)
            assert resp.status == 201 and created["spec"]["mode"] == "fast" and "junk" not in created["spec"]
            changed = copy.deepcopy(created)
            changed["spec"]["owner"] = "b"
            resp = await client.put(f"{RANGES}/r", json=changed, headers=AUTH)
            causes = (await body(resp))["details"]["causes"]
            assert resp.status == 422 and causes == [{"reason": "FieldValueForbidden", "field": "spec",
                                                      "message": "Forbidden: owner is immutable"}]
            changed["spec"]["owner"], changed["spec"]["max"] = "a", 9
            assert (await client.put(f"{RANGES}/r", json=changed, headers=AUTH)).status == 200
    run(go)


def test_a_rule_that_does_not_compile_refuses_the_crd() -> None:
    async def go() -> None:
        async with api() as (client, _store):
            bad = copy.deepcopy(SCHEMA)
            bad["properties"]["spec"]["x-kubernetes-validations"] = [{"rule": "self.min <="}]
            resp = await client.post(CRDS, json=_crd(bad), headers=AUTH)
            status = await body(resp)
            assert resp.status == 422
            assert status["details"]["causes"][0]["field"] == (
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")
            assert "compilation failed" in status["details"]["causes"][0]["message"]
    run(go)


RSTS = "/apis/apps.rollwise.dev/v1alpha1/namespaces/default/statefulsets"


def _rsts(name: str, **strategy: Any) -> dict[str, Any]:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": strategy},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}


def test_the_custom_kind_is_its_crds_business_defaults_rules_and_immutable_fields() -> None:
    async def go() -> None:
        async with api() as (client, _store):
            status = await body(await client.post(RSTS, json=_rsts("web", maxUnavailable="0%"), headers=AUTH))
            assert status["code"] == 422
            assert [c["field"] for c in status["details"]["causes"]] == [
                "spec.updateStrategy.rollingUpdate.maxUnavailable"]
            resp = await client.post(RSTS, json=_rsts("web", partition=0), headers=AUTH)
            created = await body(resp)
            assert resp.status == 201, created
            # the CRD's defaults, not apps/v1 defaulting: no pod-template defaults such as dnsPolicy
            assert created["spec"]["replicas"] == 1 and created["spec"]["podManagementPolicy"] == "OrderedReady"
            assert created["spec"]["template"]["spec"]["restartPolicy"] == "Always"
            assert "dnsPolicy" not in created["spec"]["template"]["spec"]
            created["spec"]["serviceName"] = "other"
            resp = await client.put(f"{RSTS}/web", json=created, headers=AUTH)
            status = await body(resp)
            assert resp.status == 422 and status["details"]["causes"][0]["field"] == "spec"
            assert "updates to statefulset spec for fields other than" in status["details"]["causes"][0]["message"]
    run(go)


VAPS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _policy(name: str, expression: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                             "operations": ["CREATE", "UPDATE"],
                                                             "resources": ["configmaps"]}]},
                     "validations": [{"expression": expression, **extra}]}}


def _binding(name: str, actions: list[str]) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name}, "spec": {"policyName": name, "validationActions": actions}}


def test_an_installed_validating_admission_policy_denies_or_warns_as_its_binding_says() -> None:
    async def go() -> None:
        async with api() as (client, _store):
            await client.post(VAPS, json=_policy("small", "size(object.data) <= 1",
                                                 message="at most one key"), headers=AUTH)
            await client.post(BINDINGS, json=_binding("small", ["Deny"]), headers=AUTH)
            await client.post(VAPS, json=_policy("named", "object.metadata.name.startsWith('cm-')",
                                                 messageExpression="'name ' + object.metadata.name"), headers=AUTH)
            await client.post(BINDINGS, json=_binding("named", ["Warn"]), headers=AUTH)
            cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1", "b": "2"}}
            resp = await client.post(CONFIGMAPS, json=cm, headers=AUTH)
            status = await body(resp)
            # kube-apiserver's shape: kubectl prints `The ConfigMap "x" is invalid: : ValidatingAdmissionPolicy ...`
            assert resp.status == 422 and status["message"] == (
                "ConfigMap \"x\" is invalid: : ValidatingAdmissionPolicy 'small' with binding 'small' denied request: "
                "at most one key")
            assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "", "message": (
                "ValidatingAdmissionPolicy 'small' with binding 'small' denied request: at most one key")}]
            cm["data"] = {"a": "1"}
            resp = await client.post(CONFIGMAPS, json=cm, headers=AUTH)
            assert resp.status == 201
            assert resp.headers.getall("Warning") == [
                '299 - "Validation failed for ValidatingAdmissionPolicy \'named\' with binding \'named\': name x"']
            bad = await client.post(VAPS, json=_policy("broken", "object.data.("), headers=AUTH)
            assert bad.status == 422
    run(go)


def test_unknown_fields_of_a_custom_resource_follow_field_validation_by_its_crds_schema() -> None:
    async def go() -> None:
        async with api() as (client, _store):
            await client.post(CRDS, json=_crd(SCHEMA), headers=AUTH)
            obj = _range("s", min=1, max=2, owner="a", junk=True)
            resp = await client.post(f"{RANGES}?fieldValidation=Strict", json=obj, headers=AUTH)
            assert resp.status == 422
            assert 'strict decoding error: unknown field "spec.junk"' in (await body(resp))["message"]
            resp = await client.post(f"{RANGES}?fieldValidation=Warn", json=obj, headers=AUTH)
            assert resp.status == 201 and resp.headers.getall("Warning") == ['299 - "unknown field \\"spec.junk\\""']
            assert "junk" not in (await body(resp))["spec"]
    run(go)
