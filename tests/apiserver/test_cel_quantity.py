"""Kubernetes' CEL quantity library in up's CEL engine (apiserver/admission/cel_quantity.py): the examples of
kube-apiserver's own documentation of the library evaluate as documented, errors are errors, and a Quantity is a type of
its own to the checker."""

from __future__ import annotations

import pytest

from rollwise.apiserver.admission.cel_rules import evaluate


@pytest.mark.parametrize(("expression", "expected"), [
    ("isQuantity('1.3G') && isQuantity('1.3Gi') && isQuantity('10000k')", True),
    ("isQuantity('1,3G') || isQuantity('200K') || isQuantity('Three') || isQuantity('Mi')", False),
    ("quantity('50000000G').isInteger() && quantity('50k').isInteger()", True),
    ("quantity('9999999999999999999999999999999999999G').isInteger()", False),
    ("quantity('50k').asInteger() == 50000", True),
    ("quantity('50k').sub(20000).asApproximateFloat() == 30000.0", True),
    ("quantity('50k').add(quantity('20k')) == quantity('70k')", True),
    ("quantity('50k').add(20) == quantity('50020')", True),
    ("quantity('50k').sub(quantity('20k')) == quantity('30k')", True),
    ("quantity('50k').sub(20000) == quantity('30k')", True),
    ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", True),
    ("quantity('200M').compareTo(quantity('0.2G'))", 0),
    ("quantity('50M').compareTo(quantity('50Mi'))", -1),
    ("quantity('50Mi').compareTo(quantity('50M'))", 1),
    ("quantity('150Mi').isGreaterThan(quantity('100Mi'))", True),
    ("quantity('50Mi').isGreaterThan(quantity('100Mi'))", False),
    ("quantity('50M').isLessThan(quantity('100M'))", True),
    ("quantity('100M').isLessThan(quantity('50M'))", False),
    ("quantity('1Gi') == quantity('1024Mi') && quantity('1Gi') == quantity('1073741824')", True),
    ("quantity('-3').sign() == -1 && quantity('0').sign() == 0 && quantity('2m').sign() == 1", True),
])
def test_the_examples_of_kube_apiservers_quantity_library_evaluate_as_documented(expression: str,
                                                                                 expected: object) -> None:
    assert evaluate(expression, {}) == (expected, None)


@pytest.mark.parametrize(("expression", "error"), [
    ("quantity('200K')", "unknown suffix 'K'"),
    ("quantity('Three')", "must be a quantity"),
    ("quantity('9999999999999999999999999999999999999G').asInteger()", "cannot convert value to integer"),
])
def test_a_bad_quantity_is_an_evaluation_error(expression: str, error: str) -> None:
    value, failure = evaluate(expression, {})
    assert value is None and failure is not None and error in failure


def test_a_quantity_is_compared_only_with_a_quantity() -> None:
    _, failure = evaluate("quantity('1Gi').isLessThan('2Gi')", {})
    assert failure is not None and failure.startswith("compilation failed") and "isLessThan" in failure
    _, failure = evaluate("quantity('1Gi').isLessThan({'a': '2Gi'})", {})
    assert failure is not None and failure.startswith("compilation failed")


def test_a_rule_compares_a_stored_storage_request_with_the_new_one() -> None:
    rule = "!quantity(string(self)).isLessThan(quantity(string(oldSelf)))"
    assert evaluate(rule, {"self": "2Gi", "oldSelf": 1073741824}) == (True, None)
    assert evaluate(rule, {"self": "1023Mi", "oldSelf": "1Gi"}) == (False, None)
