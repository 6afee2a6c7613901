"""Where the set controller (``runtime/reconciler.py``) reads a set and its view from: the two flavours of its
``reads`` parameter.

* ``StoreReads``: the cluster itself (the simulator, ``up``); a reconcile sees its own writes at once, so the chain
  goes on after a controller wrote. With ``census``, the first view of a reconcile comes from the index the driver
  feeds every change (``runtime/census.py``), later ones (after a write the index has not been fed yet) from the
  store.
* ``CacheReads``: informer caches (the operator); they see the controller's own writes only once the watch
  delivers them, so the chain stops at the first controller that wrote (the next reconcile goes on from there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from rollwise.api.errors import NotFound
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Change, Cluster
from rollwise.controllers.view import SetView
from rollwise.runtime.cache import CacheReader, Store
from rollwise.runtime.census import CensusIndex
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.views import set_view

__all__ = ["CacheReads", "StoreReads"]


class StoreReads:
    """Reads from ``cluster``, the clock's ``now`` stamped on each view."""

    sees_own_writes = True

    def __init__(self, cluster: Cluster, *, now: Callable[[], float], census: bool = False) -> None:
        self.cluster = cluster
        self._now = now
        self.census = CensusIndex(cluster) if census else None
        """With ``census``, views come from an index the driver feeds every change (``seen``): a reconcile then
        costs what changed, not the set's size (census.py). The driver must drain the feed before each reconcile."""

    def get(self, key: SetKey) -> Obj | None:
        try:
            return self.cluster.get(*key)
        except NotFound:
            return None

    def view(self, sts: Obj, *, gates: FeatureGates, fresh: bool) -> SetView:
        """``fresh``: nothing was written yet in this reconcile (the census index is up to date)."""
        if fresh and self.census is not None:
            return self.census.view(sts, now=self._now(), gates=gates)
        return set_view(self.cluster, sts, now=self._now(), gates=gates)

    def seen(self, change: Change) -> None:
        """A change the driver read from the feed (feeds the census index, when there is one)."""
        if self.census is not None:
            self.census.on_change(change)


class CacheReads:
    """Reads from informer stores: ``sets`` (the controller's own StatefulSet kind) and ``caches`` by kind; views
    are stamped with ``wall_time`` (the timestamps they compare with are the API's)."""

    sees_own_writes = False

    def __init__(self, sets: Store, caches: dict[str, Store], *, wall_time: Callable[[], float]) -> None:
        self.sets = sets
        self.reader = CacheReader({**caches, "StatefulSet": sets})
        self._now = wall_time

    def get(self, key: SetKey) -> Obj | None:
        return self.sets.get(key[1], key[2])

    def view(self, sts: Obj, *, gates: FeatureGates, fresh: bool) -> SetView:
        return set_view(cast(Cluster, self.reader), sts, now=self._now(), gates=gates)
