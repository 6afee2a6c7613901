"""The summary's ``writesWithoutChange`` (issue 38): the quiescence rule over every reconcile of a run."""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api.meta import name_of, namespace_of, uid_of
from rollwise.controllers.plan import EmitEvent, Plan, WriteStatus
from rollwise.controllers.view import SetView
from rollwise.invariants.decision import Decision
from rollwise.invariants.quiescence import before_requeue, noop_writes
from rollwise.sim.record import Recorder

__all__ = ["QuietWrites"]


class QuietWrites:
    """The summary's ``writesWithoutChange``: the quiescence rule (``invariants/quiescence.py``) over every
    reconcile's plan, as the controllers' observers hand it over (before it runs). A write equal to what it replaces
    counts; and every write of a reconcile made when nothing was written to the store since the same controller's
    previous reconcile of the set ended, if that one wrote at most the set's status (``left_as_it_was``), before its
    requeue. The store's change cursor says "nothing was
    written" at no cost (a view holds the census' live slots, so the objects it read cannot be kept to compare);
    a write anywhere counts as a change, so the figure can only undercount a multi-set run, never invent one."""

    def __init__(self, recorder: Recorder, cursor: Callable[[], int]) -> None:
        self._recorder = recorder
        self._cursor = cursor
        self._last: dict[tuple[str, str], tuple[int, float, float | None]] = {}
        """(controller, set uid) → the cursor when its last reconcile ended, that reconcile's time and requeue; only
        for a reconcile that wrote at most the set's status (one that created or deleted moved the world on by its
        own writes, and a status counting them is written next: pods it creates do not count until they exist)."""
        self._open: list[tuple[tuple[str, str], float, float | None]] = []
        """Reconciles decided and not yet known to have ended."""

    def observer(self, controller: str) -> Callable[[SetView, Plan], None]:
        return lambda view, plan: self.observe(controller, view, plan)

    def ended(self) -> None:
        """A reconcile's writes are done (the controller's ``after_each``; the next observer call also marks it)."""
        cursor = self._cursor()
        for key, now, requeue in self._open:
            self._last[key] = (cursor, now, requeue)
        self._open.clear()

    def observe(self, controller: str, view: SetView, plan: Plan) -> None:
        self.ended()  # the StatefulSet controller's writes are done when the quorum-aware controller decides
        sts = view.set
        key = (controller, uid_of(sts))
        if plan.actions:
            previous = self._last.get(key)
            unchanged = previous is not None and previous[0] == self._cursor() and before_requeue(
                previous[1], previous[2], view.now)
            found = len(plan.actions) if unchanged else len(noop_writes(Decision(view=view, actions=plan.actions)))
            if found:
                self._recorder.wrote_without_change(namespace_of(sts), name_of(sts), found)
        self._last.pop(key, None)
        if all(isinstance(a, WriteStatus | EmitEvent) for a in plan.actions):
            self._open.append((key, view.now, plan.requeue_after))
