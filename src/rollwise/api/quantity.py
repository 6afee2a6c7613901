"""Kubernetes resource quantities: parsing and the canonical form the API server stores.

Behaviour follows k8s.io/apimachinery pkg/api/resource (quantity.go, amount.go, suffix.go): a quantity is a
signed decimal number followed by a suffix that is binary SI (``Ki`` … ``Ei``), decimal SI (``n u m "" k M G T P
E``) or a decimal exponent (``e3``, ``E-6``). The suffix decides the *format*, and the format decides how the
value is written back (``Quantity.String()``), which is what a client reads after a round trip and what the
template hash sees. Two spellings of one value in one format are therefore one stored string (``0.5`` and
``500m``), while the formats stay apart (``1e3`` is stored as ``1e3``, ``1k`` as ``1k``), as upstream does.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from enum import Enum

__all__ = ["canonical_quantity", "parse_quantity"]


class _Format(Enum):
    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX_OF = {exponent: suffix for suffix, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_SUFFIX_OF = {exponent: suffix for suffix, exponent in _BINARY_SUFFIXES.items()}
_DIGITS = frozenset("0123456789")
# parseQuantityString: the characters a suffix may start with before an optional signed exponent.
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
# upstream rounds every non-zero amount up to a whole number of nano units ("if you want some resources, you
# should get some resources").
_NANO = Decimal("1e-9")
# upstream caps binary-SI amounts at the largest int64 (quantity.go maxAllowed).
_MAX_BINARY = Decimal(2**63 - 1)
# Exponents beyond int32 are not quantities (upstream keeps the exponent in an int32); the bound also keeps a
# hostile "1e999999999" from becoming a billion-digit string.
_MAX_EXPONENT = 2**31 - 1
_GRAMMAR = (
    "must be a quantity: an optional sign, digits with an optional fraction, and an optional suffix among "
    "Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or a decimal exponent such as e3 or E-6"
)


def parse_quantity(value: str | int | float) -> Decimal:
    """The exact value of a quantity, as upstream's ``resource.ParseQuantity`` reads it (nano-rounded up)."""
    amount, _ = _parse(value)
    return amount


def canonical_quantity(value: str | int | float) -> str:
    """The string the API server stores for a quantity (upstream ``Quantity.String()``)."""
    amount, fmt = _parse(value)
    if amount == 0:
        return "0"
    if fmt is _Format.BINARY_SI:
        # CanonicalizeBytes: a binary amount below 1024 in magnitude, or one that is not integral, is written
        # in decimal SI so that nothing is rounded away.
        if abs(amount) < 1024 or amount != amount.to_integral_value():
            fmt = _Format.DECIMAL_SI
        else:
            return _binary_string(int(amount))
    mantissa, exponent = _decimal_mantissa(amount)
    if fmt is _Format.DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    if exponent > max(_DECIMAL_SUFFIX_OF):
        # Beyond exa there is no suffix; write the value in exa rather than lose the exponent.
        mantissa *= 10 ** (exponent - max(_DECIMAL_SUFFIX_OF))
        exponent = max(_DECIMAL_SUFFIX_OF)
    return f"{mantissa}{_DECIMAL_SUFFIX_OF[exponent]}"


def _text_of(value: str | int | float) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{value!r}: {_GRAMMAR}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r}: {_GRAMMAR}")
        return repr(value)
    return str(value)


def _split(text: str) -> tuple[bool, str, str, str]:
    """Sign, integer digits, fraction digits and suffix (upstream parseQuantityString)."""
    if not text:
        raise ValueError(f"{text!r}: {_GRAMMAR}")
    pos, end = 0, len(text)
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    whole = text[start:pos]
    fraction = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        fraction = text[start:pos]
    if not whole and not fraction:
        # upstream reads a bare sign or dot as zero; a quantity with no digit at all is a typo, not a zero.
        raise ValueError(f"{text!r}: {_GRAMMAR}")
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise ValueError(f"{text!r}: unknown suffix {text[suffix_start:]!r}; {_GRAMMAR}")
    return positive, whole or "0", fraction, text[suffix_start:]


def _interpret(suffix: str, text: str) -> tuple[int, int, _Format]:
    """Base, exponent and format of a suffix (upstream suffixer.interpret)."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], _Format.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], _Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:].lstrip("+-")
        if digits and set(digits) <= _DIGITS:
            exponent = int(suffix[1:])
            if abs(exponent) <= _MAX_EXPONENT:
                return 10, exponent, _Format.DECIMAL_EXPONENT
    raise ValueError(f"{text!r}: unknown suffix {suffix!r}; {_GRAMMAR}")


# A run reads the same few quantities (a claim template's request, each claim's capacity) in every reconcile, and
# parsing is exact decimal work: remember the answers (typed, so 1 and 1.0 and "1" stay apart; errors are not kept).
def _parse(value: str | int | float) -> tuple[Decimal, _Format]:
    if type(value) in (str, int, float):  # hashable; anything else is refused by _text_of, uncached
        return _parse_cached(value)
    return _parse_uncached(value)


@functools.lru_cache(maxsize=4096, typed=True)
def _parse_cached(value: str | int | float) -> tuple[Decimal, _Format]:
    return _parse_uncached(value)


def _parse_uncached(value: str | int | float) -> tuple[Decimal, _Format]:
    text = _text_of(value)
    positive, whole, fraction, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix, text)
    digits = int(whole + fraction)
    with localcontext() as ctx:
        ctx.prec = max(28, len(whole) + len(fraction) + 64)
        ctx.Emax, ctx.Emin = 2 * _MAX_EXPONENT, -2 * _MAX_EXPONENT
        if base == 10:
            amount = Decimal(digits).scaleb(exponent - len(fraction))
        else:
            amount = Decimal(digits * 2**exponent).scaleb(-len(fraction))
        if amount != 0:
            # ParseQuantity rounds the magnitude up to a whole number of nano units.
            amount = (amount / _NANO).to_integral_value(rounding="ROUND_CEILING") * _NANO
        if fmt is _Format.BINARY_SI:
            amount = min(amount, _MAX_BINARY)
            if 0 < amount < 1:
                fmt = _Format.DECIMAL_SI
        if not positive:
            amount = -amount
    return amount, fmt


def _decimal_mantissa(amount: Decimal) -> tuple[int, int]:
    """An integer mantissa and an exponent that is a multiple of 3 (upstream AsCanonicalBytes)."""
    sign, digit_tuple, exponent = amount.normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digit_tuple)))
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    return (-mantissa if sign else mantissa), exponent


def _binary_string(amount: int) -> str:
    """An integer in the largest binary suffix that divides it (upstream AsCanonicalBase1024Bytes)."""
    exponent = 0
    while amount % 1024 == 0 and exponent < max(_BINARY_SUFFIX_OF):
        amount //= 1024
        exponent += 10
    return f"{amount}{_BINARY_SUFFIX_OF.get(exponent, '')}"
