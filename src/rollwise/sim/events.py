"""Controller events in the simulator: straight to the run record, at their place in the change feed.

The operator and ``up`` write a controller's events as ``v1`` Events through the API (``runtime/events.py``),
where any client may read them. In a simulated run nothing reads them back from the store: the run record lists
them, in the order of the writes around them, and that is all. Stored, each one cost a write, an index entry and a
trip through every follower of the feed, none of which an Event concerns (a twentieth of a run of 200 small sets,
bench/scale.py). Here an event is kept with the feed position it was made at (the writes before it), and
``Simulation.drain`` hands it to the record just before the change written after it: the order the record sees is
the one a stored Event had.
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Change
from rollwise.runtime.events import event_object
from rollwise.runtime.execute import ControllerEvent

__all__ = ["FeedEvents"]


class FeedEvents:
    """The simulator's event recorder (``SetController``'s ``recorder``): events as ``ADDED`` changes of ``v1``
    Events, each with the feed position it belongs before (``take``)."""

    __slots__ = ("_clock", "_cursor", "_pending", "_seq")

    def __init__(self, *, cursor: Callable[[], int], clock: Callable[[], float]) -> None:
        self._cursor = cursor
        self._clock = clock
        self._pending: list[tuple[int, Change]] = []
        self._seq = 0

    def record(self, obj: Obj, ev: ControllerEvent, component: str) -> None:
        self._seq += 1
        at = self._clock()
        event = event_object(obj, ev, component, seq=self._seq, at=at)
        meta = event["metadata"]
        self._pending.append((self._cursor(), Change(type="ADDED", kind="Event", namespace=meta["namespace"],
                                                     name=meta["name"], obj=event, old=None, actor=component, at=at)))

    def __bool__(self) -> bool:
        """Events wait to be taken."""
        return bool(self._pending)

    def take(self) -> list[tuple[int, Change]]:
        """The events recorded since the last call, oldest first, each with the feed position it comes before."""
        pending, self._pending = self._pending, []
        return pending
