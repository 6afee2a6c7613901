"""The wanted ordinals of a set (``api.identity.ordinal_range``) with ``spec.reserveOrdinals``, and the field's
validation."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.api.defaults import apply_defaults
from rollwise.api.features import FeatureGates
from rollwise.api.identity import ordinal_range
from rollwise.api.ordinals import Ordinals, index_in, position_in
from rollwise.api.validation import validate_statefulset


def _sts(replicas: int, reserve: Any = None, start: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}}
    if reserve is not None:
        spec["reserveOrdinals"] = reserve
    if start is not None:
        spec["ordinals"] = {"start": start}
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default"}, "spec": spec}


def _defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    return apply_defaults(obj, gates=FeatureGates())


def test_a_set_of_three_with_1_reserved_wants_0_2_and_3() -> None:
    span = ordinal_range(_sts(3, [1]))
    assert list(span) == [0, 2, 3] and len(span) == 3
    assert [span[i] for i in range(3)] == [0, 2, 3] and span[-1] == 3
    assert list(reversed(span)) == [3, 2, 0]
    assert 1 not in span and 3 in span and 4 not in span
    assert [index_in(span, o) for o in range(5)] == [0, -1, 1, 2, -1]


def test_without_a_reserved_ordinal_at_or_above_start_the_span_is_a_plain_range() -> None:
    assert ordinal_range(_sts(3)) == range(3)
    assert ordinal_range(_sts(3, [])) == range(3)
    assert ordinal_range(_sts(3, [1, 2], start=5)) == range(5, 8), "values below start reserve nothing"


def test_reserved_values_are_absolute_and_compose_with_start() -> None:
    span = ordinal_range(_sts(4, [5, 7, 2], start=5))
    assert list(span) == [6, 8, 9, 10]
    assert span.start == 5 and span.stop == 11


def test_position_counts_the_wanted_ordinals_below() -> None:
    span = Ordinals(0, 3, (1, 4))
    assert list(span) == [0, 2, 3]
    assert [position_in(span, o) for o in range(7)] == [0, 1, 1, 2, 3, 3, 4]
    assert position_in(range(2, 5), 4) == 2


def test_an_empty_set_wants_nothing() -> None:
    span = ordinal_range(_sts(0, [0]))
    assert list(span) == [] and len(span) == 0 and 0 not in span


@pytest.mark.parametrize(("reserve", "path", "kind"), [
    ("1", "spec.reserveOrdinals", "Invalid value"),
    ([-1], "spec.reserveOrdinals[0]", "Invalid value"),
    ([1, "2"], "spec.reserveOrdinals[1]", "Invalid value"),
    ([True], "spec.reserveOrdinals[0]", "Invalid value"),
    ([1, 3, 1], "spec.reserveOrdinals[2]", "Duplicate value"),
])
def test_reserve_ordinals_must_be_distinct_non_negative_integers(reserve: Any, path: str, kind: str) -> None:
    errors = validate_statefulset(_defaulted(_sts(3, reserve)), gates=FeatureGates())
    assert [(e.path, e.kind) for e in errors] == [(path, kind)]


def test_reserve_ordinals_may_change_on_update() -> None:
    old = _sts(3, [1])
    assert validate_statefulset(_defaulted(_sts(3, [2, 5])), old=_defaulted(old), gates=FeatureGates()) == []
