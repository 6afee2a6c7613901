"""The operator's informers into the runtime's one change dispatcher (``runtime/dispatch.py``): each informer event
becomes one ``Change``, and the dispatcher wakes the set controllers and the AnalysisRun controller by the
registration table's rules, the same rules the simulator and ``up`` follow.

The operator reads AnalysisRuns through two watches: the set controllers' (runs labelled with their set, for the
canary steps' views) and the AnalysisRun controller's (every run). Each feeds only the controllers that read it
(``dispatch``'s ``sets``/``objects``), so a run's change wakes each controller once, as before.
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import group_of
from rollwise.runtime.cache import Delta, Store
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.samples import MetricsRegistry

__all__ = ["CachedSets", "SetFeed", "change_of", "informer_feed"]


def change_of(kind: str, delta: Delta) -> Change:
    """An informer's event as the feed's ``Change``. The informer does not say who wrote a change: no write counts as
    this controller's own status write."""
    obj = delta.new if delta.new is not None else delta.old
    assert obj is not None
    return Change(type=delta.type, kind=kind, namespace=namespace_of(obj), name=name_of(obj), obj=obj,
                  old=delta.old if delta.new is not None else None, actor="", at=0.0,
                  group=group_of(str(obj.get("apiVersion") or "")))


def informer_feed(changes: ChangeDispatcher, kind: str, *, sets: bool = True,
                  objects: bool = True) -> Callable[[Delta], None]:
    """An informer handler that dispatches each of its events (``sets``/``objects``: to those hosts only)."""
    def feed(delta: Delta) -> None:
        changes.dispatch(change_of(kind, delta), sets=sets, objects=objects)
    return feed


class SetFeed:
    """The handler of one set controller's StatefulSet informer: a deleted set's consistency record goes, a changed
    one's status feeds ``statefulset_update_duration_seconds`` (seed 003, measured from status changes as the
    simulator measures it), then the change is dispatched to the set controllers."""

    def __init__(self, changes: ChangeDispatcher, *, consistency: ConsistencyStore,
                 samples: MetricsRegistry | None, wall_time: Callable[[], float]) -> None:
        self.changes = changes
        self.consistency = consistency
        self.samples = samples
        self.wall_time = wall_time

    def on_set(self, delta: Delta) -> None:
        ch = change_of("StatefulSet", delta)
        if delta.type == "DELETED":
            self.consistency.clear((ch.namespace, ch.name))
        elif self.samples is not None and delta.new is not None:
            self.samples.observe_set(delta.old, delta.new, self.wall_time())
        self.changes.dispatch(ch, objects=False)


class CachedSets:
    """The sets of one controller's resource, from its informer's cache (``routing.SetLookup``)."""

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    def sets_in(self, namespace: str) -> list[Obj]:
        return self._store.list(namespace)

    def find(self, namespace: str, name: str) -> Obj | None:
        return self._store.get(namespace, name)
