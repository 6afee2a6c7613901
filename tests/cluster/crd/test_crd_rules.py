"""The CRD carries rollwise's validation: every case of tests/api/test_validation.py, sent as an apps.rollwise.dev
set through the CRD's schema and CEL rules alone (what a real API server has), is refused where rollwise's validator
refuses it and accepted where it accepts it; every rule the validator applies has its twin in the table."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

from rollwise.api.errors import Invalid
from rollwise.api.features import FeatureGates
from rollwise.api.validation import validate_statefulset
from rollwise.api.validation_cel import TWINS
from rollwise.apiserver.admission.policies import PolicyRequest, policy_verdict
from rollwise.apiserver.admission.schema import admit_custom
from rollwise.cluster.crd.policy import policy
from rollwise.cluster.crd.statefulset import crd

GATES = FeatureGates()


def _validation_tests() -> Any:
    """tests/api/test_validation.py, whose cases these tests replay (test directories are not packages)."""
    path = Path(__file__).resolve().parents[2] / "api" / "test_validation.py"
    spec = importlib.util.spec_from_file_location("validation_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CASES = _validation_tests()
CREATE_CASES, IMMUTABLE_CHANGES, MUTABLE_CHANGES = _CASES.CREATE_CASES, _CASES.IMMUTABLE_CHANGES, _CASES.MUTABLE_CHANGES
changed, valid = _CASES.changed, _CASES.valid
POLICY = policy()
SCHEMA = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
CUSTOM = "apps.rollwise.dev/v1alpha1"


def _custom(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "apiVersion": CUSTOM} if obj.get("apiVersion") == "apps/v1" else obj


def twin_key(path: str, kind: str) -> tuple[str, str]:
    """A validation error's row in TWINS: indexes become [*], the strategy blocks <block>, the retention fields
    <when>, the two container lists <containers>."""
    path = re.sub(r"\[[^\]]+\]", "[*]", path)  # an index, or a key (resources.requests[cpu])
    path = re.sub(r"\.(rollingUpdate|enforcedRollingUpdate)\b", ".<block>", path)
    path = re.sub(r"\.(whenDeleted|whenScaled)$", ".<when>", path)
    path = re.sub(r"spec\.template\.spec\.(initContainers|containers)", "spec.template.spec.<containers>", path)
    return path, kind


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith((b + ".", b + "[")) or b.startswith((a + ".", a + "["))


def _policy_denies(obj: dict[str, Any], old: dict[str, Any] | None) -> str:
    """The rollwise ValidatingAdmissionPolicy's denial of a write of ``obj`` ("" when it lets it through)."""
    req = PolicyRequest(operation="UPDATE" if old else "CREATE", group="apps.rollwise.dev", version="v1alpha1",
                        resource="statefulsets", kind="StatefulSet", namespace="default", name="web", user="u",
                        obj=_custom(obj), old=None if old is None else _custom(old))
    try:
        policy_verdict(POLICY[:1], POLICY[1:], req)
    except Invalid as err:
        return err.message
    return ""


def _crd_refuses_like_validation(obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    expected = validate_statefulset(obj, old=old, gates=GATES)
    _, found = admit_custom(_custom(obj), None if old is None else _custom(old), SCHEMA)
    denial = _policy_denies(obj, old)
    for error in expected:
        key = twin_key(error.path, error.kind)
        assert key in TWINS, f"no twin for {key}"
        twin = TWINS[key]
        if twin.how in ("schema", "cel"):
            assert any(_related(f.path, error.path) for f in found), (str(error), [str(f) for f in found])
        elif twin.how == "policy":
            assert any(_related(f.path, error.path) for f in found) or error.path in denial, (str(error), denial)
    if not expected:
        assert found == [] and denial == "", ([str(f) for f in found], denial)


@pytest.mark.parametrize("changes", [c[1] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_every_create_case_is_refused_or_accepted_by_the_crd_alone_as_by_rollwise_validation(
        changes: dict[str, Any]) -> None:
    _crd_refuses_like_validation(changed(valid(), changes), None)


@pytest.mark.parametrize("changes", [c[1] for c in IMMUTABLE_CHANGES if c[0] != "unknown-field"],
                         ids=[c[0] for c in IMMUTABLE_CHANGES if c[0] != "unknown-field"])
def test_immutable_spec_fields_are_refused_by_the_crds_transition_rule(changes: dict[str, Any]) -> None:
    _crd_refuses_like_validation(changed(valid(), changes), valid())
    _, found = admit_custom(_custom(changed(valid(), changes)), _custom(valid()), SCHEMA)
    assert [(f.path, f.kind) for f in found] == [("spec", "Forbidden")]


def test_an_undeclared_spec_field_is_pruned_so_it_changes_nothing() -> None:
    stored, found = admit_custom(_custom(changed(valid(), {"spec.hostUsers": False})), _custom(valid()), SCHEMA)
    assert found == [] and "hostUsers" not in stored["spec"]


@pytest.mark.parametrize("changes", [c[1] for c in MUTABLE_CHANGES], ids=[c[0] for c in MUTABLE_CHANGES])
def test_mutable_spec_fields_may_change_under_the_crd(changes: dict[str, Any]) -> None:
    _crd_refuses_like_validation(changed(valid(), changes), valid())


def test_an_invalid_service_name_already_stored_is_tolerated_on_update_by_ratcheting() -> None:
    legacy = _custom(changed(valid(), {"spec.serviceName": "Legacy_Name"}))
    assert admit_custom(legacy, None, SCHEMA)[1] != []
    assert admit_custom(changed(legacy, {"spec.replicas": 4}), legacy, SCHEMA)[1] == []


def test_every_cel_twin_names_a_rule_the_crd_holds_and_every_row_says_why() -> None:
    rules = []

    def walk(node: dict[str, Any]) -> None:
        rules.extend(r["message"] for r in node.get("x-kubernetes-validations", ()))
        for child in (node.get("properties") or {}).values():
            walk(child)
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                walk(node[key])

    walk(SCHEMA)
    assert len(rules) >= 12
    assert all(t.how in ("schema", "cel", "policy", "apiserver", "none") and t.where for t in TWINS.values())


def test_the_crd_schema_is_structural_and_every_field_is_described() -> None:
    missing: list[str] = []

    def walk(node: dict[str, Any], path: str) -> None:
        if "type" not in node and not node.get("x-kubernetes-int-or-string"):
            missing.append(f"{path}: no type")
        for name, child in (node.get("properties") or {}).items():
            if not child.get("description"):
                missing.append(f"{path}.{name}: no description")
            walk(child, f"{path}.{name}")
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]")

    walk(SCHEMA, "")
    assert missing == []


def test_a_rule_that_does_not_hold_reports_its_message_at_its_field_path() -> None:
    obj = _custom(changed(valid(), {"spec.updateStrategy.rollingUpdate.maxUnavailable": "0%"}))
    _, found = admit_custom(obj, None, SCHEMA)
    assert [str(f) for f in found] == [
        'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "integer-or-string": must be greater '
        "than 0: an integer of at least 1 or a percentage from '1%' to '100%'"]


@pytest.mark.parametrize("path", ["spec.template.metadata.labels", "spec.template.metadata.annotations",
                                  "spec.selector.matchLabels"])
def test_a_bad_label_key_passes_the_crd_and_is_denied_by_the_policy_beside_it(path: str) -> None:
    obj = valid()
    node = obj
    for key in path.split("."):
        node = node.setdefault(key, {})
    node["-bad"] = "x"
    assert path in [e.path for e in validate_statefulset(obj, gates=GATES)]
    assert admit_custom(_custom(obj), None, SCHEMA)[1] == [] or path == "spec.selector.matchLabels"
    assert _policy_denies(obj, None).startswith(
        f"ValidatingAdmissionPolicy 'rollwise-statefulset-keys' with binding 'rollwise-statefulset-keys' denied "
        f"request: {path}: keys must be qualified names")
    assert _policy_denies(valid(), None) == ""
