"""Resource quantities parse and print as upstream's resource.Quantity does (quantity_test.go cases)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rollwise.api.quantity import canonical_quantity, parse_quantity

CANONICAL = [
    # decimal SI: one value, one spelling
    ("0.5", "500m"),
    ("500m", "500m"),
    ("1000m", "1"),
    ("0.1", "100m"),
    ("100M", "100M"),
    ("1000k", "1M"),
    ("1.5", "1500m"),
    ("1.", "1"),
    (".5", "500m"),
    ("+2", "2"),
    ("-0.5", "-500m"),
    ("0", "0"),
    ("00", "0"),
    ("0Gi", "0"),
    ("-0", "0"),
    ("3k", "3k"),
    ("1E", "1E"),
    ("1080n", "1080n"),
    ("1.08u", "1080n"),
    ("80u", "80u"),
    ("0.000000000001", "1n"),  # rounded up to the nearest nano unit
    ("-0.0000000001", "-1n"),
    ("1000E", "1000E"),
    # binary SI: the largest suffix that divides, decimal SI when it does not or below 1024
    ("1024Mi", "1Gi"),
    ("1.5Gi", "1536Mi"),
    ("0.5Gi", "512Mi"),
    ("1Ki", "1Ki"),
    ("1025Ki", "1025Ki"),
    ("0.5Ki", "512"),
    ("1.5Ki", "1536"),
    ("1Mi", "1Mi"),
    ("2048Ki", "2Mi"),
    ("0.1Ki", "102400m"),
    ("1234.567Ki", "1264196608m"),
    ("100Pi", "100Pi"),
    ("8Ei", "9223372036854775807"),  # capped at the largest int64
    # decimal exponents keep their format
    ("1e3", "1e3"),
    ("1E3", "1e3"),
    ("1E-3", "1e-3"),
    ("0.001e0", "1e-3"),
    ("1000e-12", "1e-9"),
    (".001e12", "1e9"),
    ("80e-3", "80e-3"),
    ("300e6", "300e6"),
    ("1e+3", "1e3"),
    ("1e0", "1"),
    # numbers as YAML gives them
    (0.5, "500m"),
    (2, "2"),
    (1e-05, "10e-6"),  # Python writes small floats with an exponent
    (1.5e20, "150e18"),
]


@pytest.mark.parametrize(("given", "stored"), CANONICAL, ids=[str(g) for g, _ in CANONICAL])
def test_canonical_quantity_matches_upstream_string(given: str | float, stored: str) -> None:
    assert canonical_quantity(given) == stored


@pytest.mark.parametrize(("given", "stored"), CANONICAL, ids=[str(g) for g, _ in CANONICAL])
def test_canonical_form_is_a_fixed_point(given: str | float, stored: str) -> None:
    assert canonical_quantity(stored) == stored
    assert parse_quantity(stored) == parse_quantity(given)


VALUES = [
    ("500m", Decimal("0.5")),
    ("1Ki", Decimal(1024)),
    ("1.5Gi", Decimal(1610612736)),
    ("1e3", Decimal(1000)),
    ("-2k", Decimal(-2000)),
    ("1n", Decimal("1e-9")),
    ("0.0000000001", Decimal("1e-9")),
]


@pytest.mark.parametrize(("given", "value"), VALUES, ids=[g for g, _ in VALUES])
def test_parse_quantity_gives_the_exact_value(given: str, value: Decimal) -> None:
    assert parse_quantity(given) == value


INVALID = [
    "",
    " 1",
    "1 ",
    "abc",
    "1.5.5",
    "1Kib",
    "1ki",
    "1K",
    "1e",
    "1e3.5",
    "1Mi3",
    "--1",
    "1-",
    "+",
    "-",
    ".",
    "e3",
    "1ee3",
    "0x10",
    "1,5",
    "1_000",
    "1e99999999999",
    "∞",
]


@pytest.mark.parametrize("given", INVALID)
def test_parse_quantity_rejects_what_is_not_a_quantity(given: str) -> None:
    with pytest.raises(ValueError, match="must be a quantity"):
        parse_quantity(given)


@pytest.mark.parametrize("given", [True, None, float("nan"), float("inf"), [1], {"a": 1}])
def test_parse_quantity_rejects_values_that_are_not_strings_or_numbers(given: object) -> None:
    with pytest.raises(ValueError, match="must be a quantity"):
        parse_quantity(given)  # type: ignore[arg-type]


def test_error_names_the_unknown_suffix() -> None:
    with pytest.raises(ValueError, match="unknown suffix 'Kib'"):
        parse_quantity("1Kib")
