"""Status conditions, following the Kubernetes conventions (type, status, reason, message, lastTransitionTime)."""

from __future__ import annotations

from collections.abc import Iterable

from rollwise.api.meta import Obj

__all__ = ["condition_of", "merge_conditions"]


def condition_of(conditions: Iterable[Obj], ctype: str) -> Obj | None:
    for c in conditions:
        if c.get("type") == ctype:
            return c
    return None


def merge_conditions(old: list[Obj], wanted: list[Obj], *, now: float, owned: frozenset[str]) -> list[Obj]:
    """The new condition list: the ``owned`` types exactly as ``wanted`` says, every other type kept as it was.

    ``lastTransitionTime`` moves only when a condition's status changes, per convention; an owned condition not in
    ``wanted`` is dropped. Several controllers can share one status this way, each owning its own types.
    """
    by_type = {c["type"]: c for c in old}
    out = [c for c in old if c["type"] not in owned]
    for want in wanted:
        prev = by_type.get(want["type"])
        since = prev["lastTransitionTime"] if prev is not None and prev.get("status") == want["status"] else now
        cond = {**want, "lastTransitionTime": since}
        out.append(prev if prev == cond else cond)  # the old object when unchanged: a store shares it, not copies
    return sorted(out, key=lambda c: c["type"])
