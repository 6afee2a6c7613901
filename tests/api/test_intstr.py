"""rollwise.api.intstr: int-or-percent scaling and the maxUnavailable budget (reference §2, KEP-961)."""

from __future__ import annotations

import pytest

from rollwise.api.intstr import resolve_max_unavailable, scaled_value

# reference §2: stateful_set_utils_test.go TestGetStatefulSetMaxUnavailable, row for row.
MAX_UNAVAILABLE_VECTORS = [
    (None, 10, 1),
    (3, 10, 3),
    (3, 0, 3),
    (0, 0, 1),
    ("10%", 25, 2),
    ("100%", 5, 5),
    ("50%", 5, 2),
    ("10%", 5, 1),
    ("1%", 0, 1),
    ("0%", 0, 1),
]


@pytest.mark.parametrize(
    ("value", "replicas", "expected"),
    MAX_UNAVAILABLE_VECTORS,
    ids=[f"{v}-of-{r}" for v, r, _ in MAX_UNAVAILABLE_VECTORS],
)
def test_max_unavailable_matches_upstream_vectors(value: int | str | None, replicas: int, expected: int) -> None:
    assert resolve_max_unavailable(value, replicas) == expected


def test_percent_max_unavailable_rounds_down_but_never_below_one() -> None:
    # 99% of 10 is 9.9: the API doc says "rounding up" (10) but the code and KEP-961 round down (9).
    assert resolve_max_unavailable("99%", 10) == 9
    assert resolve_max_unavailable("9%", 10) == 1


def test_int_max_unavailable_is_not_bounded_by_replicas() -> None:
    # reference §2: 7 with 3 replicas is accepted, and the controller uses it as is.
    assert resolve_max_unavailable(7, 3) == 7


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [(5, 100, True, 5), ("25%", 10, False, 2), ("25%", 10, True, 3), ("100%", 7, True, 7), ("0%", 7, True, 0)],
    ids=["int-as-is", "quarter-down", "quarter-up", "whole", "zero"],
)
def test_scaled_value_rounds_as_asked(value: int | str, total: int, round_up: bool, expected: int) -> None:
    assert scaled_value(value, total, round_up=round_up) == expected


@pytest.mark.parametrize("value", ["abc", "50", "-5%", "1.5%", "%"], ids=["word", "no-percent-sign", "negative",
                                                                            "fraction", "bare-sign"])
def test_scaled_value_rejects_a_malformed_percent(value: str) -> None:
    with pytest.raises(ValueError, match="int-or-percent"):
        scaled_value(value, 10, round_up=False)
