"""A CustomResourceDefinition's life on `rollwise up`, driven by the real kubectl: the server's one resource table
follows the CRD, so a deleted CRD's kind is gone from discovery and its URL, and a CRD created again under the same
name is served as the new definition (its versions, scope and schema), as kube-apiserver's
apiextensions-apiserver serves it (staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go
drops a CRD's storage when it is deleted and builds it anew when it is created)."""

from __future__ import annotations

import json

import pytest
from kubectl_support import Up

pytestmark = [pytest.mark.kubectl, pytest.mark.up]


def _crd(*, version: str, scope: str, field: str, more: tuple[tuple[str, str], ...] = ()) -> str:
    """The CRD gadgets.example.com: its storage version ``version`` with one string field in its spec, and ``more``
    served versions (name, field)."""
    def entry(name: str, field: str, *, storage: bool) -> str:
        return f"""  - name: {name}
    served: true
    storage: {str(storage).lower()}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              {field}: {{type: string}}
"""
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: gadgets.example.com}}
spec:
  group: example.com
  scope: {scope}
  names: {{kind: Gadget, plural: gadgets, singular: gadget, shortNames: [gd]}}
  versions:
""" + entry(version, field, storage=True) + "".join(entry(n, f, storage=False) for n, f in more)


def _gadget(*, version: str, field: str, namespaced: bool) -> str:
    ns = "\n  namespace: default" if namespaced else ""
    return f"""apiVersion: example.com/{version}
kind: Gadget
metadata:
  name: one{ns}
spec: {{{field}: x}}
"""


def _api_resources(up: Up) -> list[str]:
    return up.kubectl("api-resources", "--api-group=example.com", "--no-headers").stdout.splitlines()


def test_a_deleted_crds_kind_is_gone_from_api_resources_and_its_url_answers_a_not_found_status(up: Up) -> None:
    up.apply(_crd(version="v1", scope="Namespaced", field="colour"))
    up.until(lambda: len(_api_resources(up)) == 1, "gadgets served")
    up.apply(_gadget(version="v1", field="colour", namespaced=True))
    up.kubectl("delete", "crd", "gadgets.example.com")
    assert _api_resources(up) == []
    raw = up.kubectl("get", "--raw", "/apis/example.com/v1/namespaces/default/gadgets", check=False)
    assert raw.returncode != 0 and raw.stdout == ""
    assert "Error from server (NotFound): the server could not find the requested resource" in raw.stderr
    listed = up.kubectl("get", "gadgets", check=False)
    assert listed.returncode != 0 and listed.stdout == ""
    assert 'the server doesn\'t have a resource type "gadgets"' in listed.stderr


def test_a_crd_created_again_with_another_version_scope_and_schema_is_served_as_the_new_one(up: Up) -> None:
    up.apply(_crd(version="v1", scope="Namespaced", field="colour"))
    up.until(lambda: len(_api_resources(up)) == 1, "gadgets served")
    up.apply(_gadget(version="v1", field="colour", namespaced=True))
    up.kubectl("delete", "crd", "gadgets.example.com")
    up.apply(_crd(version="v2", scope="Cluster", field="size"))
    up.until(lambda: len(_api_resources(up)) == 1, "gadgets served again")
    [line] = _api_resources(up)
    assert line.split() == ["gadgets", "gd", "example.com/v2", "false", "Gadget"]
    up.apply(_gadget(version="v2", field="size", namespaced=False))
    got = json.loads(up.kubectl("get", "gadgets", "one", "-o", "json").stdout)
    assert got["apiVersion"] == "example.com/v2" and got["spec"] == {"size": "x"}
    assert "namespace" not in got["metadata"]
    unknown = up.kubectl("apply", "--validate=strict", "-f", "-", check=False,
                         stdin=_gadget(version="v2", field="colour", namespaced=False).replace("one", "two"))
    assert unknown.returncode != 0 and 'unknown field "spec.colour"' in unknown.stderr



def test_an_established_crds_scope_is_refused_a_change_at_its_field_and_it_serves_a_version_added_to_it(up: Up) -> None:
    up.apply(_crd(version="v1", scope="Namespaced", field="colour"))
    up.until(lambda: len(_api_resources(up)) == 1, "gadgets served")
    up.apply(_gadget(version="v1", field="colour", namespaced=True))
    moved = up.kubectl("apply", "-f", "-", stdin=_crd(version="v1", scope="Cluster", field="colour"), check=False)
    assert moved.returncode != 0 and moved.stdout == ""
    assert 'spec.scope: Invalid value: "Cluster": field is immutable' in moved.stderr
    up.apply(_crd(version="v1", scope="Namespaced", field="colour", more=(("v2", "size"),)))
    group = json.loads(up.kubectl("get", "--raw", "/apis/example.com").stdout)
    assert [v["version"] for v in group["versions"]] == ["v1", "v2"]
    got = json.loads(up.kubectl("get", "gadgets.v2.example.com", "one", "-o", "json").stdout)
    assert got["apiVersion"] == "example.com/v2" and got["metadata"]["namespace"] == "default"
