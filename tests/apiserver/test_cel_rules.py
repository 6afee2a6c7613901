"""The CEL runtime behind CRD rules and admission policies: Kubernetes' own library functions, evaluation errors
reported (not taken for a failed rule), and only declared fields visible to a rule."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.apiserver.admission.cel_rules import evaluate, rule_errors


@pytest.mark.parametrize(("expression", "expected"), [
    ("[1, 2, 3].isSorted() && ![3, 1].isSorted()", True),
    ("[1, 2, 3].sum() == 6 && [].sum() == 0", True),
    ("[4, 2, 9].min() == 2 && [4, 2, 9].max() == 9", True),
    ("'ab12cd3'.find('[0-9]+') == '12'", True),
    ("'ab12cd3'.findAll('[0-9]') == ['1', '2', '3'] && 'ab12cd3'.findAll('[0-9]', 2) == ['1', '2']", True),
    ("isIP('10.0.0.1') && !isIP('10.0.0') && isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.1')", True),
    ("isQuantity('500m') && isQuantity('2Gi') && !isQuantity('2GG')", True),
    ("'a/b'.lastIndexOf('/') == 1 && 'abc'.substring(1) == 'bc'", True),
], ids=["isSorted", "sum", "min-max", "find", "findAll", "ip-cidr", "quantity", "strings"])
def test_kubernetes_library_functions_evaluate_as_in_kube_apiserver(expression: str, expected: bool) -> None:
    assert evaluate(expression, {}) == (expected, None)


def test_an_evaluation_error_is_reported_as_one_and_names_the_error() -> None:
    assert evaluate("[].min()", {}) == (None, "OUT_OF_RANGE: min(list) called on an empty list")
    schema: dict[str, Any] = {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
        "x-kubernetes-validations": [{"rule": "self.items.min() > 0"}]}}}
    [error] = rule_errors({"spec": {"items": []}}, None, schema)
    assert error.path == "spec" and error.rule.startswith("rule evaluation error: OUT_OF_RANGE")


def test_a_rule_sees_only_the_fields_its_schema_declares() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]}}}
    old = {"spec": {"a": "x", "kept": 1}}
    assert rule_errors({"spec": {"a": "x", "kept": 2}}, old, schema) == []
    assert [e.rule for e in rule_errors({"spec": {"a": "y", "kept": 1}}, old, schema)] == ["immutable"]
