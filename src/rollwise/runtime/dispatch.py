"""The one change dispatcher: a driver registers the controllers it hosts, then feeds it every change it reads; the
dispatcher asks the registration table which keys the change wakes and hands them to the hosts that own them.

* Set controllers register with the ``SetLookup`` their wake rule reads sets through (``add_sets``). For each change,
  ``registrations.sets_woken`` is asked once per lookup: the simulator and ``up`` have one (the store's both
  resources, ``routing.ClusterSets``); the operator one per StatefulSet kind it runs, since each informer cache holds
  one resource (a member Lease's ``member-of`` names a set of each kind).
* Object controllers register their row with the reads their rule lists (``add_objects``); each row's
  ``woken_by`` is asked once per change.

As controller-runtime's ``source.Kind`` with ``handler.EnqueueRequestForOwner`` feeds one event to every
controller watching the kind, each mapping it to its own requests (``pkg/handler/enqueue_owner.go``); here the
mappings are the table's rows (``runtime/registrations.py``), written once for every driver.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import GroupKind
from rollwise.runtime.registrations import KindController, sets_woken
from rollwise.runtime.routing import SetLookup
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.wakes import ObjectKey

__all__ = ["ChangeDispatcher"]


@dataclass(slots=True)
class _SetHosts:
    lookup: SetLookup
    wakes: list[tuple[Collection[GroupKind] | None, Callable[[SetKey], None]]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _ObjectHost:
    row: KindController
    reads: Cluster
    wake: Callable[[Iterable[ObjectKey]], None]


class ChangeDispatcher:
    """Wakes the registered hosts for each change ``dispatch`` is given."""

    def __init__(self) -> None:
        self._sets: list[_SetHosts] = []
        self._objects: list[_ObjectHost] = []

    def add_sets(self, lookup: SetLookup, wake: Callable[[SetKey], None], *,
                 kinds: Collection[GroupKind] | None = None) -> None:
        """Wake a set controller with the keys a change wakes among ``lookup``'s sets (only those of ``kinds``, when
        given: ``up`` leaves a kind no controller of its runs for). Hosts registered with the same lookup object
        share one answer of the wake rule."""
        for hosts in self._sets:
            if hosts.lookup is lookup:
                hosts.wakes.append((kinds, wake))
                return
        self._sets.append(_SetHosts(lookup, [(kinds, wake)]))

    def add_objects(self, row: KindController, reads: Cluster, wake: Callable[[Iterable[ObjectKey]], None]) -> None:
        """Wake the controller of ``row`` with the keys its rule (``woken_by``, which may list ``reads``) gives."""
        self._objects.append(_ObjectHost(row, reads, wake))

    def dispatch(self, ch: Change, *, sets: bool = True, objects: bool = True) -> None:
        """Wake every host ``ch`` concerns. ``sets``/``objects``: a driver that reads one kind through two feeds
        (the operator's set controllers see labelled AnalysisRuns, its AnalysisRun controller every run) hands each
        feed's changes to the hosts that read that feed only, as each watch would on its own."""
        if sets:
            for hosts in self._sets:
                keys = sets_woken(hosts.lookup, ch)
                if not keys:
                    continue
                for kinds, wake in hosts.wakes:
                    for key in keys:
                        if kinds is None or key[0] in kinds:
                            wake(key)
        if objects:
            for host in self._objects:
                host.wake(host.row.woken_by(host.reads, ch))
