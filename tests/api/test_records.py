"""The records' dataclass: frozen for the type checker, and at run time as a frozen dataclass is but for the cost."""

from __future__ import annotations

import dataclasses

import pytest

from rollwise.api import records


@records.dataclass(frozen=True, slots=True, kw_only=True)
class Fast:
    name: str
    at: float
    parts: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Frozen:
    name: str
    at: float
    parts: tuple[int, ...] = ()


def test_a_record_hashes_and_compares_as_the_frozen_dataclass_of_the_same_fields() -> None:
    a, b = Fast(name="web-0", at=1.5, parts=(1, 2)), Fast(name="web-0", at=1.5, parts=(1, 2))
    assert a == b and hash(a) == hash(b) == hash(Frozen(name="web-0", at=1.5, parts=(1, 2)))
    assert a != Fast(name="web-1", at=1.5, parts=(1, 2))
    assert len({a, b, Fast(name="web-1", at=0.0)}) == 2


def test_a_record_is_replaced_and_read_like_any_dataclass() -> None:
    a = Fast(name="web-0", at=1.5)
    assert dataclasses.replace(a, at=2.0) == Fast(name="web-0", at=2.0)
    assert [f.name for f in dataclasses.fields(a)] == ["name", "at", "parts"]
    assert not hasattr(a, "__dict__")  # still slotted


def test_a_record_keeps_a_hash_of_its_own() -> None:
    @records.dataclass(frozen=True, slots=True)
    class Named:
        name: str

        def __hash__(self) -> int:
            return 7

    assert hash(Named("x")) == 7


def test_a_mutable_record_stays_unhashable_as_a_mutable_dataclass_is() -> None:
    @records.dataclass(slots=True)
    class Mutable:
        name: str

    with pytest.raises(TypeError):
        hash(Mutable("x"))
