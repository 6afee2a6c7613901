"""Views kept up to date from the change feed: each set's pods and census without walking them per reconcile.

``set_view`` builds a view from the store on every reconcile: it lists the set's pods, and ``reconcile`` then
classifies every one of them (controllers/census.py). That is O(replicas) per reconcile, and an OrderedReady
rollout is O(replicas) reconciles. ``CensusIndex`` follows the change feed instead and keeps, per set, its owned
pods by name (handed out in ``set_view``'s order, sorted only if read) and which of them are quiet, reclassifying a
pod only when it, one of its claims or the set's ``QuietContext`` changes; a pod that is loud only because
``minReadySeconds`` has not passed yet is looked at again when a census is asked for. Quietness is monotone in
time, so a pod found quiet earlier is quiet now.

The index is exact, never approximate: ``view`` gives what ``set_view`` would, plus the census that ``census_of``
would compute over those pods (tests/sim/test_incremental_views.py holds it to both at every reconcile of
random runs); where it cannot be sure (the set object it saw is not the one asked about, two owned pods share a
name), it hands back ``set_view``'s view without a census and the reconcile computes everything.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar, overload

from rollwise.api.features import FeatureGates
from rollwise.api.identity import claim_name, ordinal_of, revision_of
from rollwise.api.meta import (
    Obj,
    controller_of,
    labels,
    name_of,
    namespace_of,
    selector_matches,
    shares_owner_references,
    uid_of,
)
from rollwise.api.ordinals import index_in
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import STATEFULSET_KINDS
from rollwise.controllers.census import Census, QuietContext, is_quiet, quiet_context
from rollwise.controllers.view import SetView
from rollwise.runtime.views import IndexedReads, analysis_reads, budget_reads, set_revisions, set_view

__all__ = ["CensusIndex", "PerSetFollower", "before_and_after", "controlled_pods"]


def before_and_after(ch: Change) -> tuple[Obj | None, Obj | None]:
    """The object as a follower of the feed last knew it (None for a creation) and as it is now (None once gone)."""
    before = ch.old if ch.old is not None else (ch.obj if ch.type == "DELETED" else None)
    return before, None if ch.type == "DELETED" else ch.obj


def controlled_pods(reads: IndexedReads, uid: str) -> list[Obj]:
    """Pods whose controller reference names ``uid``: what a follower of the feed takes in when it first meets the
    set (pods may come before their set, for adoption)."""
    return [pod for pod in reads.controlled_by("Pod", uid) if (controller_of(pod) or {}).get("uid") == uid]


E = TypeVar("E")


class PerSetFollower(Generic[E]):
    """What every per-set follower of the feed shares: one entry per StatefulSet, by uid, made when the set is first
    seen and given the pods it already controls, refreshed on each change of the set, dropped when the set is
    deleted; a pod belongs to the entry of its controller. A follower must see the store from its start: what is
    stored when it is made is read once (``_read_sets``), then only changes."""

    def __init__(self, reads: IndexedReads) -> None:
        self._reads = reads
        self._sets: dict[str, E] = {}

    def _new_entry(self, sts: Obj) -> E:
        raise NotImplementedError

    def _take_pod(self, entry: E, pod: Obj) -> None:
        """A pod the set controlled when it was first seen."""
        raise NotImplementedError

    def _update(self, entry: E, sts: Obj) -> None:
        """The set as it is now (also right after its entry is made)."""
        raise NotImplementedError

    def _read_sets(self, cluster: Cluster) -> None:
        for resource in STATEFULSET_KINDS:
            for sts in cluster.list(resource):
                self._set_seen(sts)

    def _set_changed(self, ch: Change) -> None:
        if ch.type == "DELETED":
            self._sets.pop(uid_of(ch.obj), None)
        else:
            self._set_seen(ch.obj)

    def _set_seen(self, sts: Obj) -> None:
        uid = uid_of(sts)
        entry = self._sets.get(uid)
        if entry is None:
            entry = self._sets[uid] = self._new_entry(sts)
            for pod in controlled_pods(self._reads, uid):
                self._take_pod(entry, pod)
        self._update(entry, sts)

    def _entry_of(self, pod: Obj | None) -> E | None:
        if pod is None:
            return None
        ref = controller_of(pod)
        return None if ref is None else self._sets.get(str(ref.get("uid")))


@dataclass(slots=True)
class _SetPods:
    """One set's owned pods (controller reference to its uid), by name, and which of them are quiet."""

    sts: Obj
    ctx: QuietContext | None = None
    pods: dict[str, Obj] = field(default_factory=dict)
    """By name, in no order: ``_ByName`` gives them in ``set_view``'s (a list kept sorted shifted half the set on
    every pod created or gone, a twentieth of a 10,000-replica run, the most of its growth from 1,000)."""
    clash: bool = False
    """Two owned pods of one name (in two namespaces): which comes first would be ``set_view``'s business."""
    slots: list[Obj | None] = field(default_factory=list)
    loud: list[int] = field(default_factory=list)
    """Indexes with no quiet pod, ascending. A list kept sorted, unlike ``pods``: each reconcile reads it, and an
    OrderedReady rollout is a reconcile per pod event, so sorting it there would cost more than the shift."""
    quiet_outdated: list[int] = field(default_factory=list)
    quiet_updated: int = 0
    quiet_index: dict[str, int] = field(default_factory=dict)
    """Name of a quiet pod -> its index."""
    loud_names: set[str] = field(default_factory=set)
    """Names of the owned pods that are not quiet (in range or not)."""


class _ByName(Sequence[Obj]):
    """A set's owned pods in ``set_view``'s order (by name), then its orphans; sorted only when read. A reconcile
    with the census in hand reads them only on a collision or a context it derived differently (census.py), and
    within one reconcile the index does not change (the feed is drained between callbacks)."""

    __slots__ = ("_extra", "_pods", "_sorted")

    def __init__(self, pods: dict[str, Obj], extra: Sequence[Obj] = ()) -> None:
        self._pods = pods
        self._extra = extra
        self._sorted: list[Obj] | None = None

    def _items(self) -> list[Obj]:
        if self._sorted is None:
            pods = self._pods
            self._sorted = [pods[name] for name in sorted(pods)] + list(self._extra)
        return self._sorted

    def __len__(self) -> int:
        return len(self._pods) + len(self._extra)

    @overload
    def __getitem__(self, index: int) -> Obj: ...

    @overload
    def __getitem__(self, index: slice) -> list[Obj]: ...

    def __getitem__(self, index: int | slice) -> Obj | list[Obj]:
        return self._items()[index]

    def __iter__(self) -> Iterator[Obj]:
        return iter(self._items())


class CensusIndex(PerSetFollower[_SetPods]):
    """Per-set pods and census, fed with every ``Change`` (``on_change``) and read with ``view``."""

    def __init__(self, cluster: Cluster) -> None:
        if not isinstance(cluster, IndexedReads):
            raise TypeError("a census index reads pods by owner: the cluster must serve indexed reads")
        super().__init__(cluster)
        self._cluster = cluster
        self._claims: dict[str, dict[str, Obj]] = {}
        self._leases: dict[str, dict[str, Obj]] = {}
        self._claim_pods: dict[tuple[str, str], tuple[str, str]] = {}
        """(namespace, claim name) -> (set uid, pod name) of the pod whose quietness reads that claim."""
        self._revisions: dict[str, tuple[object, str, tuple[Obj, ...]]] = {}
        """Set uid -> (its spec, its name, ``set_revisions``): read again after any revision changes."""
        self._now = 0.0
        for claim in cluster.list("PersistentVolumeClaim"):
            self._claims.setdefault(namespace_of(claim), {})[name_of(claim)] = claim
        for lease in cluster.list("Lease"):
            self._leases.setdefault(namespace_of(lease), {})[name_of(lease)] = lease
        self._read_sets(cluster)

    # -- following the feed --------------------------------------------------------------------------------

    def on_change(self, ch: Change) -> None:
        self._now = max(self._now, ch.at)
        if ch.kind == "Pod":
            self._pod_changed(ch)
        elif ch.kind == "PersistentVolumeClaim":
            self._claim_changed(ch)
        elif ch.kind == "Lease":
            leases = self._leases.setdefault(ch.namespace, {})
            if ch.type == "DELETED":
                leases.pop(ch.name, None)
            else:
                leases[ch.name] = ch.obj
        elif ch.kind == "ControllerRevision":
            self._revisions.clear()
        elif ch.of_statefulset:
            self._set_changed(ch)

    def _new_entry(self, sts: Obj) -> _SetPods:
        return _SetPods(sts=sts)

    def _take_pod(self, entry: _SetPods, pod: Obj) -> None:
        self._insert(entry, pod)

    def _update(self, entry: _SetPods, sts: Obj) -> None:
        before, entry.sts = entry.sts, sts
        if entry.ctx is not None and sts["spec"] is before["spec"] and _revisions(sts) == _revisions(before):
            return  # the context reads nothing else (a status write shares the spec): the controller's own writes
        ctx = _context(sts)
        if ctx is not entry.ctx and ctx != entry.ctx:  # contexts are memoised: mostly the same one
            entry.ctx = ctx
            self._reclassify_all(entry)

    def _claim_changed(self, ch: Change) -> None:
        claims = self._claims.setdefault(ch.namespace, {})
        if ch.type == "DELETED":
            claims.pop(ch.name, None)
        else:
            claims[ch.name] = ch.obj
        owner = self._claim_pods.get((ch.namespace, ch.name))
        if owner is not None and (entry := self._sets.get(owner[0])) is not None:
            pod = entry.pods.get(owner[1])
            if pod is not None:
                self._classify(entry, pod)

    def _pod_changed(self, ch: Change) -> None:
        old, new = ch.old, ch.obj
        if ch.type == "MODIFIED" and old is not None and shares_owner_references(old, new):
            # The same set holds it under the same name (a status write, say).
            entry = self._entry_of(new)
            if entry is not None:
                self._insert(entry, new, replacing=old)
            return
        before, after = before_and_after(ch)
        old_entry = self._entry_of(before)
        new_entry = self._entry_of(after)
        if old_entry is not None and before is not None and (
                old_entry is not new_entry or after is None or name_of(after) != name_of(before)):
            self._remove(old_entry, before)
        if new_entry is not None and after is not None:
            self._insert(new_entry, after)

    def _insert(self, entry: _SetPods, pod: Obj, *, replacing: Obj | None = None) -> None:
        name = name_of(pod)
        held = entry.pods.get(name)
        if held is not None and held is not replacing and namespace_of(held) != namespace_of(pod):
            entry.clash = True
        entry.pods[name] = pod
        self._classify(entry, pod)

    def _remove(self, entry: _SetPods, pod: Obj) -> None:
        name = name_of(pod)
        if name in entry.pods:
            self._unclassify(entry, name)
            entry.loud_names.discard(name)
            del entry.pods[name]

    # -- quietness -----------------------------------------------------------------------------------------

    def _reclassify_all(self, entry: _SetPods) -> None:
        n = entry.ctx.replicas if entry.ctx is not None else 0
        entry.slots = [None] * n
        entry.loud = list(range(n))
        entry.quiet_outdated = []
        entry.quiet_updated = 0
        entry.quiet_index = {}
        entry.loud_names = set(entry.pods)
        for name in sorted(entry.pods):  # by name, as ``set_view`` lists them (the order slot clashes are met in)
            self._classify(entry, entry.pods[name], bulk=True)
        entry.quiet_outdated.sort()

    def _classify(self, entry: _SetPods, pod: Obj, *, bulk: bool = False) -> None:
        """Forget what was recorded about the pod's name, then record the pod as quiet if it is. ``bulk``: every
        pod is being classified afresh, and ``quiet_outdated`` is sorted once at the end (inserting in name order
        would shift half of it each time)."""
        name = name_of(pod)
        self._unclassify(entry, name)
        entry.loud_names.add(name)
        ctx = entry.ctx
        if ctx is None:
            return
        ns = namespace_of(pod)
        ordinal = ordinal_of(pod)
        for template in ctx.templates:
            self._claim_pods[(ns, claim_name(template, ctx.name, ordinal))] = (ctx.uid, name)
        if not is_quiet(ctx, entry.sts, pod, self._claims.get(ns, {}), self._now):
            return
        index = index_in(ctx.span, ordinal)
        if entry.slots[index] is not None:
            entry.clash = True
            return
        entry.slots[index] = pod
        entry.quiet_index[name] = index
        entry.loud_names.discard(name)
        del entry.loud[bisect.bisect_left(entry.loud, index)]
        if revision_of(pod) == ctx.update_revision:
            entry.quiet_updated += 1
        elif bulk:
            entry.quiet_outdated.append(index)
        else:
            bisect.insort(entry.quiet_outdated, index)

    def _unclassify(self, entry: _SetPods, name: str) -> None:
        index = entry.quiet_index.pop(name, None)
        if index is None or entry.ctx is None:
            return
        quiet = entry.slots[index]
        entry.slots[index] = None
        entry.loud_names.add(name)
        bisect.insort(entry.loud, index)
        if quiet is not None and revision_of(quiet) == entry.ctx.update_revision:
            entry.quiet_updated -= 1
        else:
            del entry.quiet_outdated[bisect.bisect_left(entry.quiet_outdated, index)]

    def _refresh(self, entry: _SetPods, now: float) -> None:
        """Pods that only time may make quiet (minReadySeconds not yet passed) get another look at ``now``."""
        ctx = entry.ctx
        self._now = max(self._now, now)
        if ctx is None or ctx.min_ready_seconds <= 0:
            return
        for name in sorted(entry.loud_names):
            pod = entry.pods.get(name)
            if pod is not None:
                self._classify(entry, pod)

    # -- reading ---------------------------------------------------------------------------------------------

    def view(self, sts: Obj, *, now: float, gates: FeatureGates) -> SetView:
        """``set_view``'s view of the set, with the census when the index can vouch for it."""
        entry = self._sets.get(uid_of(sts))
        if entry is None or entry.sts is not sts or entry.clash or entry.ctx is None:
            return set_view(self._cluster, sts, now=now, gates=gates)
        self._refresh(entry, now)
        ns = namespace_of(sts)
        orphans = [p for p in self._reads.uncontrolled("Pod", ns)
                   if selector_matches(sts["spec"].get("selector"), labels(p))]
        pods = entry.pods
        loud_owned = [pods[name] for name in sorted(entry.loud_names) if name in pods]
        # The index's own lists, not copies (census.py): the reconcile reads them before the next change comes in.
        census = Census(ctx=entry.ctx, slots=entry.slots, loud=entry.loud, quiet_outdated=entry.quiet_outdated,
                        quiet_updated=entry.quiet_updated, others=(*loud_owned, *orphans))
        return SetView(set=sts, pods=_ByName(pods, orphans),
                       claims=self._claims.get(ns, {}), revisions=self._set_revisions(sts),
                       leases=self._leases.get(ns, {}), now=now, gates=gates, census=census,
                       **budget_reads(self._cluster, ns), **analysis_reads(self._cluster, sts))

    def _set_revisions(self, sts: Obj) -> tuple[Obj, ...]:
        """``set_revisions``, read once per set between revision changes (a set's candidates depend on its uid,
        name and selector, and on the revisions stored)."""
        uid, spec, name = uid_of(sts), sts["spec"], name_of(sts)
        hit = self._revisions.get(uid)
        if hit is not None and hit[0] is spec and hit[1] == name:
            return hit[2]
        revisions = set_revisions(self._cluster, sts)
        self._revisions[uid] = (spec, name, revisions)
        return revisions


def _revisions(sts: Obj) -> tuple[object, object]:
    status = sts.get("status") or {}
    return status.get("updateRevision"), status.get("currentRevision")


def _context(sts: Obj) -> QuietContext | None:
    """The context the set's next reconcile will most likely derive: the revisions its status names."""
    update, current = _revisions(sts)
    if not isinstance(update, str) or not isinstance(current, str) or not update or not current:
        return None
    return quiet_context(sts, update_revision=update, current_revision=current)
