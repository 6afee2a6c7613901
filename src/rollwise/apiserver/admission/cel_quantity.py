"""Kubernetes' CEL quantity library (``k8s.io/apiserver/pkg/cel/library/quantity.go``) for ``up``'s CEL engine:
``quantity(s)``, ``isQuantity(s)`` and a Quantity's ``compareTo``, ``isLessThan``, ``isGreaterThan``, ``sign``,
``isInteger``, ``asInteger``, ``asApproximateFloat``, ``add`` and ``sub`` (a Quantity or an int). The parsing is
the api package's (``api/quantity.py``, upstream ``resource.ParseQuantity``), so a rule compares what validation
compares.

kube-apiserver's Quantity is an opaque CEL type; the Python binding of cel-cpp cannot carry an opaque value
between functions, so a Quantity travels as a one-entry map ``{0u: b"<exact amount>"}`` (``map(uint, bytes)``, a
type no JSON value has, so the checker still refuses ``quantity(s).isLessThan(self)`` for a string ``self``). Its
amount is written normalized, so ``==`` between two quantities is equality of amounts, as kube's ``Equal`` is
(``quantity('1Gi') == quantity('1024Mi')``). What differs: the type's name in a type error (``map(uint, bytes)``,
not ``kubernetes.Quantity``), and ``mul``/``div``/``divInt``, which are not offered.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, localcontext
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]

from rollwise.api.quantity import parse_quantity

__all__ = ["QUANTITY_TYPE", "amount_of", "is_quantity", "quantity_functions", "quantity_value"]

_INT64 = (-(2**63), 2**63 - 1)


def _quantity_type() -> Any:
    return cel.Type.Map(cel.Type.UINT, cel.Type.BYTES)


QUANTITY_TYPE = _quantity_type()
"""The CEL type a Quantity has here (see the module's note)."""


def _exact(amount: Decimal) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 4096  # exact for any amount ParseQuantity accepts (nano units up to a large exponent)
        return amount.normalize()


def quantity_value(amount: Decimal) -> dict[int, bytes]:
    """A Quantity as CEL carries it here."""
    return {0: str(_exact(amount)).encode()}


def amount_of(value: Mapping[int, Any]) -> Decimal:
    """The amount a Quantity carries (its bytes come back as ``bytearray`` from the binding)."""
    raw = value.get(0)
    if not isinstance(raw, (bytes, bytearray)) or len(value) != 1:
        raise ValueError("not a quantity")
    return Decimal(bytes(raw).decode())


def is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except (ValueError, ArithmeticError):
        return False
    return True


def _quantity(text: str) -> dict[int, bytes]:
    try:
        return quantity_value(parse_quantity(text))
    except ArithmeticError:
        raise ValueError(f"{text!r}: quantity out of range") from None


def _compare(a: Mapping[int, Any], b: Mapping[int, Any]) -> int:
    left, right = amount_of(a), amount_of(b)
    return (left > right) - (left < right)


def _sign(q: Mapping[int, Any]) -> int:
    amount = amount_of(q)
    return (amount > 0) - (amount < 0)


def _is_integer(q: Mapping[int, Any]) -> bool:
    amount = amount_of(q)
    return amount == amount.to_integral_value() and _INT64[0] <= amount <= _INT64[1]


def _as_integer(q: Mapping[int, Any]) -> int:
    if not _is_integer(q):
        raise ValueError("cannot convert value to integer")
    return int(amount_of(q))


def _as_float(q: Mapping[int, Any]) -> float:
    return float(amount_of(q))  # beyond a double's range: +Inf or -Inf, as AsApproximateFloat64


def _add(a: Mapping[int, Any], b: Mapping[int, Any]) -> dict[int, bytes]:
    with localcontext() as ctx:
        ctx.prec = 4096
        return quantity_value(amount_of(a) + amount_of(b))


def _add_int(a: Mapping[int, Any], n: int) -> dict[int, bytes]:
    return _add(a, quantity_value(Decimal(n)))


def _sub(a: Mapping[int, Any], b: Mapping[int, Any]) -> dict[int, bytes]:
    return _add(a, quantity_value(-amount_of(b)))


def _sub_int(a: Mapping[int, Any], n: int) -> dict[int, bytes]:
    return _add(a, quantity_value(Decimal(-n)))


def quantity_functions() -> list[Any]:
    """The declarations to give ``cel.NewEnv(functions=...)`` (``isQuantity`` included)."""
    t, q = cel.Type, QUANTITY_TYPE

    def member(name: str, ret: Any, params: list[Any], impl: Any, suffix: str = "") -> Any:
        return cel.Overload(f"quantity_{name}{suffix}", ret, [q, *params], is_member=True, impl=impl)

    return [
        cel.FunctionDecl("quantity", [cel.Overload("string_to_quantity", q, [t.STRING], is_member=False,
                                                   impl=_quantity)]),
        cel.FunctionDecl("isQuantity", [cel.Overload("is_quantity_string", t.BOOL, [t.STRING], is_member=False,
                                                     impl=is_quantity)]),
        cel.FunctionDecl("compareTo", [member("compare_to", t.INT, [q], _compare)]),
        cel.FunctionDecl("isLessThan", [member("is_less_than", t.BOOL, [q], lambda a, b: _compare(a, b) < 0)]),
        cel.FunctionDecl("isGreaterThan", [member("is_greater_than", t.BOOL, [q], lambda a, b: _compare(a, b) > 0)]),
        cel.FunctionDecl("sign", [member("sign", t.INT, [], _sign)]),
        cel.FunctionDecl("isInteger", [member("is_integer", t.BOOL, [], _is_integer)]),
        cel.FunctionDecl("asInteger", [member("get_int", t.INT, [], _as_integer)]),
        cel.FunctionDecl("asApproximateFloat", [member("get_float", t.DOUBLE, [], _as_float)]),
        cel.FunctionDecl("add", [member("add", q, [q], _add), member("add", q, [t.INT], _add_int, "_int")]),
        cel.FunctionDecl("sub", [member("sub", q, [q], _sub), member("sub", q, [t.INT], _sub_int, "_int")]),
    ]
