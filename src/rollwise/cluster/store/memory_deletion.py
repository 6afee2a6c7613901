"""The memory store's delete verb and the garbage collector's view of the store (``MemoryCluster`` inherits the
verb): DeleteOptions checks, Orphan propagation, graceful deletion (``rollwise.cluster.store.deletion``) and the
collector's own deletes and owner-reference edits (``rollwise.cluster.store.gc``).

Orphan propagation as kube-apiserver and the garbage collector do it: the delete sets the deletionTimestamp and
adds the ``orphan`` finalizer; the orphaning step then strips the owner's references from its dependents, removes
the finalizer, and the owner is gone. ``orphan_later``, when a driver sets it, runs that step later (``up``: a
collector's latency, so a controller sees an owner being deleted before its pods are orphans, as on a cluster);
unset (the simulator, the explorer), it runs at once, within the delete."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from rollwise.api.errors import FieldError, Invalid
from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Propagation
from rollwise.cluster.resources import POD, ResourceRef
from rollwise.cluster.store.deletion import plan_deletion, without_owner_refs
from rollwise.cluster.store.faults import FaultPlan
from rollwise.cluster.store.gc import GC_ACTOR, ORPHAN_FINALIZER, GarbageCollector, Key
from rollwise.cluster.store.preconditions import check_preconditions
from rollwise.cluster.store.storage import ObjectIndex

__all__ = ["DeletionVerbs", "GcBridge", "GcStore"]

_PROPAGATIONS = ("Background", "Foreground", "Orphan")


class GcStore(Protocol):
    """What the bridge reads and writes of the store: named here, so this module needs no import of the store
    (``rollwise.cluster.store.memory`` imports this module; ``DeletionVerbs`` is such a store)."""

    _index: ObjectIndex

    def _lookup(self, key: Key) -> Obj | None: ...
    def _delete(self, key: Key, obj: Obj, *, grace: float | None, foreground: bool, actor: str,
                orphan: bool = False) -> None: ...
    def _drop_owner_refs(self, key: Key, uids: Sequence[str]) -> None: ...
    def _write(self, key: Key, old: Obj | None, new: Obj, actor: str, *, remove: bool = False) -> Obj: ...


class GcBridge:
    """The store as the garbage collector sees it (``rollwise.cluster.store.gc.GcHost``).

    Made for each collector run rather than kept on the store: a store holding a bridge that holds the store is a
    reference cycle, and then every store dropped (the explorer drops thousands of forks) waited for Python's
    cyclic collector, whose full passes over the explorer's heap took a quarter of its time."""

    __slots__ = ("_c",)

    def __init__(self, cluster: GcStore) -> None:
        self._c = cluster

    def by_key(self, key: Key) -> Obj | None:
        return self._c._lookup(key)

    def by_uid(self, uid: str) -> Obj | None:
        key = self._c._index.uids.get(uid)
        return None if key is None else self._c._lookup(key)

    def key_of(self, obj: Obj) -> Key:
        return self._c._index.uids[str(obj["metadata"]["uid"])]

    def delete(self, key: Key, *, foreground: bool) -> None:
        obj = self._c._lookup(key)
        if obj is not None:
            self._c._delete(key, obj, grace=None, foreground=foreground, actor=GC_ACTOR)

    def drop_owner_refs(self, key: Key, uids: Sequence[str]) -> None:
        self._c._drop_owner_refs(key, uids)

    def drop_finalizer(self, key: Key, finalizer: str) -> None:
        obj = self._c._lookup(key)
        if obj is None or finalizer not in (obj["metadata"].get("finalizers") or ()):
            return
        meta = dict(obj["metadata"])
        meta["finalizers"] = [f for f in meta["finalizers"] if f != finalizer]
        if not meta["finalizers"]:
            del meta["finalizers"]
        self._c._write(key, obj, {**obj, "metadata": meta}, GC_ACTOR)


class DeletionVerbs:
    """``delete`` and the deletion steps the collector shares, over the store's lookups and ``_write``."""

    orphan_later: Callable[[Callable[[], None]], None] | None = None
    """Set by a driver to run each orphaning step later (it is handed the step); None: at once."""

    if TYPE_CHECKING:
        _gc: GarbageCollector
        _faults: FaultPlan
        _index: ObjectIndex
        _clock: Callable[[], float]
        _lookup: Callable[[Key], Obj | None]

        def _key(self, ref: ResourceRef, namespace: str | None, name: str) -> Key: ...
        def _require(self, key: Key) -> Obj: ...
        def objects(self) -> Iterator[Obj]: ...
        def _write(self, key: Key, old: Obj | None, new: Obj, actor: str, *, remove: bool = False) -> Obj: ...

    def delete(
        self,
        kind: ResourceRef,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: float | None = None,
        propagation: Propagation = "Background",
        preconditions: Mapping[str, Any] | None = None,
        actor: str = "user",
    ) -> Obj | None:
        """Request deletion; the object if it remains (terminating), else None. See ``Cluster.delete``.

        ``preconditions`` (DeleteOptions.preconditions: ``uid``, ``resourceVersion``) raise Conflict if stale."""
        key = self._key(kind, namespace, name)
        self._faults.check("delete", key[0])
        if propagation not in _PROPAGATIONS:
            raise Invalid(errors=[FieldError(path="propagationPolicy", rule=f"must be one of {_PROPAGATIONS}",
                                             value=propagation, kind="Unsupported value")])
        if grace_period_seconds is not None and grace_period_seconds < 0:
            raise Invalid(errors=[FieldError(path="gracePeriodSeconds", rule="must be greater than or equal to 0",
                                             value=grace_period_seconds)])
        obj = self._require(key)
        check_preconditions(preconditions, obj, kind=key[0].kind, name=key[2])
        uid = str(obj["metadata"].get("uid"))
        orphan = propagation == "Orphan"
        self._delete(key, obj, grace=grace_period_seconds, foreground=propagation == "Foreground", orphan=orphan,
                     actor=actor)
        self._gc.run(GcBridge(self))
        if orphan:
            if self.orphan_later is None:
                self._orphan(uid)
            else:
                self.orphan_later(lambda: self._orphan(uid))
        current = self._lookup(key)
        return current if current is not None and current["metadata"].get("uid") == uid else None

    def resume_orphaning(self) -> None:
        """The orphaning step of every object an ``orphan`` finalizer still holds (a store reopened from disk after
        it stopped in the middle), at once or through ``orphan_later``."""
        held = [str(o["metadata"]["uid"]) for o in self.objects() if o["metadata"].get("deletionTimestamp") is not None
                and ORPHAN_FINALIZER in (o["metadata"].get("finalizers") or ())]
        for uid in held:
            if self.orphan_later is None:
                self._orphan(uid)
            else:
                self.orphan_later(functools.partial(self._orphan, uid))

    def _orphan(self, uid: str) -> None:
        """The collector's orphaning step for the owner ``uid``: its references leave every dependent, then its
        ``orphan`` finalizer goes (which removes it unless another finalizer or a grace period holds it)."""
        for dep in self._gc.dependents(uid):
            self._drop_owner_refs(dep, [uid])
        bridge = GcBridge(self)
        owner = bridge.by_uid(uid)
        if owner is not None:
            bridge.drop_finalizer(bridge.key_of(owner), ORPHAN_FINALIZER)
        self._gc.run(bridge)

    def _delete(self, key: Key, obj: Obj, *, grace: float | None, foreground: bool, actor: str,
                orphan: bool = False) -> None:
        """The delete path shared by callers and the collector; writes nothing when there is nothing to do."""
        outcome = plan_deletion(obj, pod=key[0] == POD, grace=grace, foreground=foreground, now=self._clock(),
                                orphan=orphan)
        if outcome is not None:
            self._write(key, obj, outcome[1], actor, remove=outcome[0] == "remove")

    def _drop_owner_refs(self, key: Key, uids: Sequence[str]) -> None:
        obj = self._lookup(key)
        new = None if obj is None else without_owner_refs(obj, uids)
        if new is not None:
            self._write(key, obj, new, GC_ACTOR)
