"""Int-or-percent values (``maxUnavailable``)."""

from __future__ import annotations

import re

__all__ = ["PERCENT", "resolve_max_unavailable", "scaled_value"]

PERCENT = re.compile(r"^[0-9]+%$")


def scaled_value(value: int | str, total: int, *, round_up: bool) -> int:
    """An int as is, or ``p%`` of ``total`` rounded as asked (Kubernetes GetScaledValueFromIntOrPercent)."""
    if isinstance(value, int):
        return value
    if not PERCENT.match(value):
        raise ValueError(f"invalid int-or-percent value {value!r}")
    p = int(value[:-1])
    return -(-(p * total) // 100) if round_up else (p * total) // 100


def resolve_max_unavailable(value: int | str | None, replicas: int) -> int:
    """The maxUnavailable budget: nil is 1; a percent rounds down; never below 1.

    KEP-961 and reference §2 (getStatefulSetMaxUnavailable): the API docs say "rounding up" but the code and the
    KEP round down; the budget is then clamped to at least 1 so a rollout always makes progress.
    """
    if value is None:
        return 1
    return max(1, scaled_value(value, replicas, round_up=False))
