"""rollwise.api.claim_templates: KEP-4650's update rules for volumeClaimTemplates, and how a claim compares."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rollwise.api.claim_templates import SHRINK_RULE, capacity_of, check_claim_template_update, fixed_differences
from rollwise.api.defaults import apply_defaults
from rollwise.api.features import FeatureGates
from rollwise.api.validation import validate_statefulset

GATES = FeatureGates()

STORAGE = "spec.volumeClaimTemplates[0].spec.resources.requests.storage"


def _claim(name: str, storage: Any) -> dict[str, Any]:
    return {"metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}}


def _with_claims(*claims: dict[str, Any]) -> dict[str, Any]:
    return apply_defaults({
        "apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                 "template": {"metadata": {"labels": {"app": "db"}},
                              "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}},
                 "volumeClaimTemplates": [copy.deepcopy(c) for c in claims]}}, gates=GATES)


def _sized(storage: Any) -> dict[str, Any]:
    return _with_claims(_claim("data", storage))


def test_growing_a_templates_storage_is_accepted_on_update() -> None:
    assert validate_statefulset(_sized("2Gi"), old=_sized("1Gi"), gates=GATES) == []
    assert validate_statefulset(_sized("1Gi"), old=_sized("1024Mi"), gates=GATES) == []  # equal amounts


def test_shrinking_a_templates_storage_is_forbidden_with_the_field_path_and_the_rule() -> None:
    errors = validate_statefulset(_sized("500Mi"), old=_sized("1Gi"), gates=GATES)
    assert [str(e) for e in errors] == [f"{STORAGE}: Forbidden: {SHRINK_RULE}"]


def test_a_shrink_is_judged_per_template_by_name_not_by_position() -> None:
    old = _with_claims(_claim("data", "1Gi"), _claim("logs", "10Gi"))
    # the templates swap places: data's 1Gi now sits where logs' 10Gi was, which is no shrink of either
    assert validate_statefulset(_with_claims(_claim("logs", "10Gi"), _claim("data", "1Gi")), old=old,
                                gates=GATES) == []
    smaller = _with_claims(_claim("logs", "5Gi"), _claim("data", "1Gi"))
    assert [e.path for e in validate_statefulset(smaller, old=old, gates=GATES)] == [STORAGE]


def test_a_new_template_may_ask_for_any_size() -> None:
    added = _with_claims(_claim("data", "1Gi"), _claim("logs", "1Mi"))
    assert validate_statefulset(added, old=_sized("1Gi"), gates=GATES) == []


@pytest.mark.parametrize("stored", [True, 5, "data", {"name": "data"}])
def test_stored_templates_of_another_type_are_no_list_to_compare_against(stored: Any) -> None:
    """An update checked against an old spec whose templates are not a list (a scenario's object that its own
    rules refuse, judged again at each patch step) compares nothing, and raises nothing."""
    old = {**_sized("1Gi"), "spec": {**_sized("1Gi")["spec"], "volumeClaimTemplates": stored}}
    assert check_claim_template_update(_sized("500Mi")["spec"], old["spec"]) == []


def test_a_claims_capacity_is_its_status_or_else_its_request() -> None:
    claim = {"spec": {"resources": {"requests": {"storage": "2Gi"}}}}
    assert capacity_of(claim) == "2Gi"
    assert capacity_of({**claim, "status": {"capacity": {"storage": "1Gi"}}}) == "1Gi"


def test_fixed_differences_name_the_fields_a_claim_cannot_take() -> None:
    claim = {"spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard"}}
    template = {"spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast", "volumeMode": None}}
    assert fixed_differences(claim, template) == ["storageClassName"]
