"""The one grammar of a duration flag (``run --lease-duration``, every ``--timeout`` of the cluster commands):
kubectl's, Go's ``time.ParseDuration`` for the units a person types (``500ms``, ``30s``, ``5m``, ``1.5h``), or a bare
number of seconds. No sign, exponent, NaN or infinity: a NaN deadline is never reached and a negative one is
passed before the command begins."""

from __future__ import annotations

import math
import re

__all__ = ["seconds"]

_DURATION = re.compile(r"(?P<value>[0-9]+(?:\.[0-9]+)?)(?P<unit>ms|s|m|h)?")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def seconds(text: str) -> float | None:
    """``text`` in seconds, or None when it is not a duration (a value too large to be finite included)."""
    m = _DURATION.fullmatch(text.strip())
    if m is None:
        return None
    value = float(m["value"]) * _UNITS[m["unit"]]
    return value if math.isfinite(value) else None
