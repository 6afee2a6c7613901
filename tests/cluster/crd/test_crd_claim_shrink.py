"""The CRD's twin of the shrink rule (``validation_cel.claim_storage_shrink_rule``): through the CRD's schema and
CEL rules alone, a claim template's storage request may grow and may not shrink, where rollwise's validator says
so, compared as quantities (``1Gi`` equals ``1073741824``), templates matched by name."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rollwise.api.features import FeatureGates
from rollwise.api.validation import validate_statefulset
from rollwise.apiserver.admission.schema import admit_custom
from rollwise.cluster.crd.statefulset import crd

SCHEMA = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def _set(*storages: tuple[str, object]) -> dict[str, Any]:
    return {
        "apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}},
                 "volumeClaimTemplates": [
                     {"metadata": {"name": name},
                      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}
                     for name, size in storages]}}


def _both(new: dict[str, Any], old: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(the CRD's errors, the validator's errors) for an update of ``old`` to ``new``."""
    stored_old, _ = admit_custom(copy.deepcopy(old), None, SCHEMA)
    stored_new, crd_errors = admit_custom(copy.deepcopy(new), stored_old, SCHEMA)
    validator = validate_statefulset(stored_new, old=stored_old, gates=FeatureGates())
    return [str(e) for e in crd_errors], [str(e) for e in validator]


@pytest.mark.parametrize(("old", "new"), [
    ((("data", "1Gi"),), (("data", "2Gi"),)),
    ((("data", "1Gi"),), (("data", 1073741824),)),
    ((("data", "1Gi"),), (("data", "1024Mi"),)),
    ((("data", "1Gi"),), (("logs", "1Mi"), ("data", "1Gi"))),
    ((("data", "1Gi"),), (("other", "1Mi"),)),
])
def test_a_grown_equal_or_new_template_is_accepted_by_the_crd_and_the_validator(old: Any, new: Any) -> None:
    assert _both(_set(*new), _set(*old)) == ([], [])


def test_a_shrunk_template_is_refused_by_the_crd_naming_the_template_as_the_validator_refuses_it() -> None:
    crd_errors, validator = _both(_set(("logs", "1Gi"), ("data", "1023Mi")), _set(("data", "1Gi"), ("logs", "1Gi")))
    assert validator == ["spec.volumeClaimTemplates[1].spec.resources.requests.storage: Forbidden: may not be less "
                         "than the previous value"]
    assert crd_errors == ["spec.volumeClaimTemplates: Forbidden: spec.volumeClaimTemplates[name: data].spec.resources"
                          ".requests.storage: may not be less than the previous value (1Gi): 1023Mi"]


def test_the_shrink_rule_runs_on_update_only() -> None:
    _, errors = admit_custom(_set(("data", "1Mi")), None, SCHEMA)
    assert errors == []
