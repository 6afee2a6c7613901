"""``up``'s controllers stand down while the operator leads: one controller per object.

``rollwise run`` takes part in leader election (on by default, as kube-controller-manager's ``--leader-elect``)
and writes on its Lease what it runs (``registrations.operator_marks``: its ``--controllers`` and namespaces).
``up``'s controllers read the same Lease, with the same rule a standby candidate uses (client-go's
``leaderelection.go``): the holder leads until ``leaseDurationSeconds`` have passed on *our* clock since the record
was last seen to change; a released Lease (empty ``holderIdentity``) ends it at once. While a holder leads, every
controller of ``up`` that the holder also runs for a set (``Registration.operator_names``; the namespace within its
``--namespaces``) decides nothing for that set; ``up``'s StatefulSet controller of ``apps/v1`` sets, which the
operator never runs (kube-controller-manager's part), goes on. When the holder is gone, they resume: the driver
wakes every set.

Why not a candidate of its own: ``up`` holding the Lease would keep the operator waiting, and the custom kind left
to it (``--controllers=-apps.rollwise.dev``) would then have no controller at all. So ``up`` only watches; it never
writes the Lease. Watching (rather than ``--controllers`` alone) is what makes the documented set-up safe as
written: ``up``'s quorum-aware controller cannot be told apart from the operator's by a flag the user forgot.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.api.validation_rules import is_int
from rollwise.runtime.registrations import (
    OBJECT_CONTROLLERS,
    SET_CONTROLLERS,
    KindController,
    OperatorMarks,
    Registration,
    read_operator_marks,
)
from rollwise.runtime.setkeys import SetKey

__all__ = ["OperatorLeases"]

log = logging.getLogger("rollwise.wall")


def _up_names(marks: OperatorMarks) -> list[str]:
    """What stands down, as ``up --controllers`` names it: the operator's ``statefulset`` is ``up``'s
    ``apps.rollwise.dev`` (its ``statefulset``, of apps/v1 sets, never stands down); unknown marks name nothing."""
    rows: tuple[Registration | KindController, ...] = (*SET_CONTROLLERS, *OBJECT_CONTROLLERS)
    return sorted({row.up_names[kind] for row in rows for kind in row.kinds
                   if row.operator_names.get(kind) in marks.controllers})


@dataclass(frozen=True, slots=True)
class _Held:
    holder: str
    marks: OperatorMarks
    until: float
    """Our clock's time when the holder stops leading unless the record changes again."""


class OperatorLeases:
    """The operators' Leases as ``up`` last saw them. ``seen`` on every Lease change; ``stands_down`` before each
    controller of a reconcile (``SetController.stands_down``)."""

    def __init__(self, now: Callable[[], float], *, say: Callable[[str], None] = log.info) -> None:
        self._now = now
        self._say = say
        """Where a stand-down and a resume are told (``up`` prints them on stderr)."""
        self._held: dict[tuple[str, str], _Held] = {}

    def seen(self, lease: Obj, *, deleted: bool = False) -> tuple[float | None, bool]:
        """Record a change of ``lease``. Returns when its holder stops leading if nothing changes (None: not an
        operator's Lease, released, or gone), and whether a holder just stopped leading (wake every set)."""
        key = (namespace_of(lease), name_of(lease))
        marks = read_operator_marks(lease)
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        if deleted or marks is None or not holder:
            if self._held.pop(key, None) is None:
                return None, False
            self._say(f"operator lease {key[0]}/{key[1]} released: up's controllers resume")
            return None, True
        # The API server holds a Lease's duration to a positive int32 (check_lease_spec); a data directory written
        # before it did may still hold anything: such a holder leads for no time at all.
        duration: Any = spec.get("leaseDurationSeconds")
        until = self._now() + (float(duration) if is_int(duration) and duration > 0 else 0.0)
        before = self._held.get(key)
        self._held[key] = _Held(holder=holder, marks=marks, until=until)
        if before is None or before.holder != holder:
            self._say(f"{holder} leads (lease {key[0]}/{key[1]}): up's controllers it also runs stand down "
                      f"({', '.join(_up_names(marks)) or 'none'}"
                      + (f" in {', '.join(sorted(marks.namespaces))})" if marks.namespaces else ")"))
        return until, False

    def expire(self) -> bool:
        """Forget every holder whose time is up; whether one was (the driver then wakes every set)."""
        now = self._now()
        gone = [k for k, h in self._held.items() if h.until <= now]
        for key in gone:
            self._say(f"{self._held.pop(key).holder} stopped renewing lease {key[0]}/{key[1]}: up's controllers "
                      "resume")
        return bool(gone)

    def next_expiry(self) -> float | None:
        """The earliest time a holder stops leading unless its Lease changes again; None: no operator leads."""
        return min((h.until for h in self._held.values()), default=None)

    def stands_down(self, row: Registration | KindController, key: SetKey) -> bool:
        """Whether ``up``'s ``row`` leaves the set (or run) ``key`` to a leading operator now."""
        kind, namespace, _ = key
        now = self._now()
        return any(h.until > now and h.marks.runs(row, kind, namespace) for h in self._held.values())
