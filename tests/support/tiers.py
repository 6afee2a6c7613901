"""Which rows of a sweep run in ``make test`` (the fast loop) and which only in ``make test-slow``; CI runs both.

A sweep repeats one check over strategy x policy (or over every bundled scenario). The fast loop keeps the rows
named where the sweep is written, chosen so each check still runs on at least one rolling and one
self-healing row and a change that breaks the check shows at once; the whole matrix runs in CI. Single tests
that cost tens of CPU seconds by themselves (a hypothesis search for a planted bug, the widest explorations,
real etcd timing runs) carry ``pytest.mark.slow`` where they are written.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import pytest

__all__ = ["examples", "sweep"]


def sweep(rows: Iterable[Sequence[Any]], *, fast: Collection[tuple[Any, ...]]) -> list[Any]:
    """``rows`` as pytest params (id: the values joined by '-'), each row not in ``fast`` marked slow."""
    out = []
    for row in rows:
        values = tuple(row)
        marks = [] if values in fast else [pytest.mark.slow]
        out.append(pytest.param(*values, marks=marks, id="-".join(map(str, values))))
    return out


def examples(fast: int, full: int) -> list[Any]:
    """Params for a property test's example count: ``fast`` in ``make test``, ``full`` in ``make test-slow``.

    For the few properties whose examples cost tens of milliseconds each; the test sets hypothesis'
    ``max_examples`` from the param (``settings(max_examples=n)(given(...)(check))()``)."""
    return [pytest.param(fast, id=f"{fast}-examples"),
            pytest.param(full, marks=[pytest.mark.slow], id=f"{full}-examples")]
