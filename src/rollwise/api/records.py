"""``dataclass`` for the value records made on every event (changes, views, plans, actions, kubelet steps).

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``, which makes it three times as
slow as a plain one (900 ns against 330 for a nine-field change); a run of 200 small sets makes about 100,000 of
these records, and the difference was a few per cent of the run (bench/scale.py). So the records keep
``frozen=True`` for the type checker, which then refuses any assignment to a field as it does for every frozen
dataclass, while at run time they are plain slotted dataclasses with the hash a frozen one has (``unsafe_hash``:
the same function of the fields). What changes at run time is only that an assignment the type checker would
have refused is not refused again; nothing in the project assigns to them (mypy runs on every test run).

Use it only where the records are made per event; elsewhere the standard decorator is the clearer choice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

__all__ = ["dataclass"]

T = TypeVar("T")

if TYPE_CHECKING:
    from dataclasses import dataclass
else:

    def dataclass(cls: type[T] | None = None, /, **options: Any) -> type[T] | Callable[[type[T]], type[T]]:
        """``dataclasses.dataclass`` with ``frozen`` checked statically only (see the module's docs)."""

        def wrap(c: type[T]) -> type[T]:
            opts = dict(options)
            if opts.get("frozen"):
                opts["frozen"] = False
                if opts.get("eq", True) and "__hash__" not in c.__dict__:
                    opts["unsafe_hash"] = True
            return dataclasses.dataclass(c, **opts)

        return wrap if cls is None else wrap(cls)
