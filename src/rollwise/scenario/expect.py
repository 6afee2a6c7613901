"""The ``expect:`` block: assertions over the summary, checked after the run (failures make exit status 1)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.numbers import check_number, describe_type

__all__ = ["SUMMARY_FIELDS", "check_expectations", "parse_expect"]

SUMMARY_FIELDS = (
    "completed",
    "rolloutSeconds",
    "maxUnavailableObserved",
    "unavailablePodSeconds",
    "quorumLossSeconds",
    "leaderElections",
    "leaderlessSeconds",
    "podCreations",
    "podDeletions",
    "forcedReplacements",
    "podInPlaceUpdates",
    "claimsLost",
    "writesWithoutChange",
)
# completed is a boolean; the null-able figures (null when the set has no rollout or no quorum model) accept null
# with eq and ne; every other comparison needs a finite number.
_BOOLEAN_FIELDS = ("completed",)
_NULLABLE_FIELDS = ("rolloutSeconds", "quorumLossSeconds", "leaderElections", "leaderlessSeconds")
_ORDERING = ("lt", "le", "gt", "ge")
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}


def parse_expect(raw: Any, *, path: str) -> tuple[dict[str, dict[str, Any]], list[FieldError]]:
    """``{set: {field: value | {op: value}}}``; a bare value means ``eq``."""
    if not isinstance(raw, Mapping):
        return {}, [FieldError(path=path, value=raw, rule="must be a mapping of StatefulSet name to expectations")]
    out: dict[str, dict[str, Any]] = {}
    errors: list[FieldError] = []
    for set_name, fields in raw.items():
        if not isinstance(fields, Mapping):
            errors.append(FieldError(path=f"{path}.{set_name}", value=fields,
                                     rule="must be a mapping of field to value"))
            continue
        checks: dict[str, Any] = {}
        for fname, want in fields.items():
            fpath = f"{path}.{set_name}.{fname}"
            if fname not in SUMMARY_FIELDS:
                errors.append(FieldError(path=fpath, kind="Unsupported value", value=fname,
                                         rule="supported fields: " + ", ".join(SUMMARY_FIELDS)))
                continue
            ops = dict(want) if isinstance(want, Mapping) else {"eq": want}
            bad = [op for op in ops if op not in _OPS]
            if bad or not ops:
                errors.append(FieldError(path=fpath, value=ops, rule="operators: " + ", ".join(_OPS)))
                continue
            nested = isinstance(want, Mapping)
            problems = [e for op, value in ops.items()
                        for e in _check_value(fname, op, value, f"{fpath}.{op}" if nested else fpath)]
            errors += problems
            if not problems:
                checks[fname] = ops
        out[str(set_name)] = checks
    return out, errors


def _check_value(fname: str, op: str, value: Any, path: str) -> list[FieldError]:
    """The value an operator compares with must be of the figure's type, so a typo is exit 2 now, not exit 1 later."""
    if fname in _BOOLEAN_FIELDS:
        if op not in ("eq", "ne"):
            return [FieldError(path=path, kind="Unsupported value", value=op, rule=f"{fname} takes eq or ne")]
        if not isinstance(value, bool):
            return [FieldError(path=path, value=value, rule=f"must be true or false, not {describe_type(value)}")]
        return []
    if value is None and fname in _NULLABLE_FIELDS and op not in _ORDERING:
        return []
    return check_number(value, path)


def check_expectations(expect: Mapping[str, Mapping[str, Any]], summary: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Every failed assertion, in words: ``web.rolloutSeconds: expected le 60, got 75.0``."""
    failures = []
    for set_name, checks in expect.items():
        figures = summary.get(set_name)
        if figures is None:
            failures.append(f"{set_name}: no such StatefulSet in the run")
            continue
        for fname, ops in checks.items():
            got = figures.get(fname)
            for op, want in ops.items():
                try:
                    ok = _OPS[op](got, want)
                except TypeError:
                    ok = False
                if not ok:
                    failures.append(f"{set_name}.{fname}: expected {op} {want!r}, got {got!r}")
    return failures
