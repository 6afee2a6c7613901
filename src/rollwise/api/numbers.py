"""The number rule: every number read from a file or a flag is of the right type, finite and in range.

One function, used wherever a number is read (scenario fields, steps, expectations, flags), so a NaN, an infinity,
a string that looks like a number or an absurd size gets the same words everywhere.
"""

from __future__ import annotations

import math

from rollwise.api.errors import FieldError

__all__ = ["MAX_SECONDS", "check_number", "describe_type", "plain"]

# Thirty days of virtual time: far beyond any rollout's deadline. A run that never settles (a pod in back-off)
# simulates every restart up to its limit, about ten seconds of wall time for thirty days, so a larger limit would
# only buy a longer wait.
MAX_SECONDS = 30 * 86400


def describe_type(value: object) -> str:
    """The JSON name of a value's type, for "must be a number, not a string"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def check_number(
    value: object,
    path: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    integer: bool = False,
    what: str = "",
) -> list[FieldError]:
    """No errors when ``value`` is a finite number (an int when ``integer``) within the bounds, else one error."""
    noun = what or ("an integer" if integer else "a number")
    if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not isinstance(value, int)):
        return [FieldError(path=path, value=value, rule=f"must be {noun}, not {describe_type(value)}")]
    if not math.isfinite(value):
        return [FieldError(path=path, value=str(value), rule="must be a finite number")]
    if minimum is not None and (value <= minimum if exclusive_minimum else value < minimum):
        bound = "greater than" if exclusive_minimum else "greater than or equal to"
        return [FieldError(path=path, value=value, rule=f"must be {bound} {plain(minimum)}")]
    if maximum is not None and value > maximum:
        return [FieldError(path=path, value=value, rule=f"must be at most {plain(maximum)}")]
    return []


def plain(value: float) -> str:
    """A number as a person writes it: ``2592000``, ``1.5``, never ``2.592e+06``."""
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e16):
        return str(int(value))
    return repr(value)
