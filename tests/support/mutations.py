"""Documents mutated as users and faults mutate them: a value swapped for an odd one, a key deleted. Shared by the
property tests that feed mutated files to the commands (scenarios, manifests, run records)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["REPLACEMENTS", "get_at", "paths_in", "set_at"]

REPLACEMENTS = st.sampled_from([
    None, True, False, 0, -1, 1, 3, 2**31, 2**63 - 1, -(2**63), 1e308, -1e-300, 0.5, "", "x", "5", "lots", "NaN",
    "[bold]", "\u00e9\u2603", [], {}, [1, "a", None], {"a": 1}, {"spec": {"replicaz": 3}},
])
"""Values of every JSON type, out of range, or of the wrong type for most fields. Deep-copy before placing one:
hypothesis shares the sampled objects between examples."""


def paths_in(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in ``doc``, the root ``()`` first, as tuples of keys and list indices."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths_in(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += paths_in(v, (*prefix, i))
    return out


def get_at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def set_at(doc: Any, path: tuple[Any, ...], value: Any, *, delete: bool = False) -> Any:
    """``doc`` with the value at ``path`` replaced (or deleted), changed in place; the new root is returned."""
    if not path:
        return value
    parent = get_at(doc, path[:-1])
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc
