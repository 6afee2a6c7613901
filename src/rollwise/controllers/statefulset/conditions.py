"""Status conditions, following the Kubernetes conventions (type, status, reason, message, lastTransitionTime)."""

from __future__ import annotations

from rollwise.api.meta import Obj

__all__ = ["invalid_spec_conditions", "merge_conditions"]

OWNED = frozenset({"Progressing", "Available"})
"""Condition types this controller owns; others that someone else wrote are kept (upstream drops them)."""


def invalid_spec_conditions(message: str) -> list[Obj]:
    return [{"type": "Progressing", "status": "False", "reason": "InvalidSpec", "message": message}]


def merge_conditions(old: list[Obj], wanted: list[Obj], *, now: float) -> list[Obj]:
    """The new condition list: owned types as ``wanted`` says, others kept as they were.

    ``lastTransitionTime`` moves only when a condition's status changes, per convention; an owned condition not in
    ``wanted`` is dropped.
    """
    by_type = {c["type"]: c for c in old}
    out = [c for c in old if c["type"] not in OWNED]
    for want in wanted:
        prev = by_type.get(want["type"])
        since = prev["lastTransitionTime"] if prev is not None and prev.get("status") == want["status"] else now
        out.append({**want, "lastTransitionTime": since})
    return sorted(out, key=lambda c: c["type"])
