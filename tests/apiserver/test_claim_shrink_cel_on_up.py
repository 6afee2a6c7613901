"""The custom kind refuses a shrunk claim template on `rollwise up` through its CRD alone (the transition rule on
volumeClaimTemplates, which needs Kubernetes' CEL quantity library: apiserver/admission/cel_quantity.py), driven by the
real kubectl: the error names the field and the template; a grown template, or one written in other units, is
accepted."""

from __future__ import annotations

import json

import pytest
from kubectl_support import Up, statefulset

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(crd=True),
]


def _custom(name: str) -> str:
    return statefulset(name, replicas=1).replace("apiVersion: apps/v1", "apiVersion: apps.rollwise.dev/v1alpha1")


def _storage(size: str) -> str:
    return json.dumps({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}]}})


def test_a_shrunk_claim_template_of_a_custom_set_is_refused_by_the_crd_with_the_field_path(up: Up) -> None:
    up.apply(_custom("db"))
    shrunk = up.kubectl("patch", "rsts", "db", "--type=merge", "-p", _storage("500Mi"), check=False)
    assert shrunk.returncode == 1 and shrunk.stdout == ""
    assert ('The StatefulSet "db" is invalid: spec.volumeClaimTemplates: Forbidden: '
            "spec.volumeClaimTemplates[name: data].spec.resources.requests.storage: may not be less than the "
            "previous value (1Gi): 500Mi") in shrunk.stderr, shrunk.stderr
    same = up.kubectl("patch", "rsts", "db", "--type=merge", "-p", _storage("1024Mi"))
    assert same.returncode == 0, "1024Mi is 1Gi: no shrink"
    up.kubectl("patch", "rsts", "db", "--type=merge", "-p", _storage("2Gi"))
    stored = up.read("rsts", "db")
    assert stored["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "2Gi"
    again = up.kubectl("patch", "rsts", "db", "--type=merge", "-p", _storage("1Gi"), check=False)
    assert again.returncode == 1 and "may not be less than the previous value (2Gi): 1Gi" in again.stderr
