"""The executor's requests (runtime/execute.py): a ``Cluster`` verb and its arguments, yielded by the plan's steps
and carried by a driver (sync or async). Apart, so the steps of one kind of object can live in their own module."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Literal

from rollwise.api.records import dataclass

__all__ = ["Call", "Steps", "Verb", "call"]

Verb = Literal["get", "create", "update", "update_status", "patch", "delete"]


@dataclass(frozen=True, slots=True)
class Call:
    """One request of the executor: a verb of the ``Cluster`` protocol, with its arguments."""

    verb: Verb
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def call(verb: Verb, *args: Any, **kwargs: Any) -> Call:
    return Call(verb, args, kwargs)


Steps = Generator[Call, Any, None]
"""Steps that yield calls and return nothing."""
