"""The ``expect:`` block: assertions over the summary, checked after the run (failures make exit status 1)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.errors import FieldError

__all__ = ["SUMMARY_FIELDS", "check_expectations", "parse_expect"]

SUMMARY_FIELDS = (
    "completed",
    "rolloutSeconds",
    "maxUnavailableObserved",
    "unavailablePodSeconds",
    "quorumLossSeconds",
    "leaderElections",
    "podCreations",
    "podDeletions",
    "forcedReplacements",
    "claimsLost",
)
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
            if isinstance(want, Mapping):
                bad = [op for op in want if op not in _OPS]
                if bad or not want:
                    errors.append(FieldError(path=fpath, value=dict(want),
                                             rule="operators: " + ", ".join(_OPS)))
                    continue
                checks[fname] = dict(want)
            else:
                checks[fname] = {"eq": want}
        out[str(set_name)] = checks
    return out, errors


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
