"""Owner-reference garbage collection for the memory store, with the rules of Kubernetes' garbage collector.

The StatefulSet controller never deletes claims itself: it points owner references at the set or the pod and lets
the garbage collector act (reference §6.2), and it waits for the collector to remove a stale claim (§6.3). So the
simulated cluster needs these rules, and in this order:

- an object without ``ownerReferences`` is never collected; a terminating object is left to finish;
- an owner is *absent* when no object has its uid (a name match with another uid is an earlier incarnation: absent);
- an object with at least one present owner stays; references to absent owners beside it are removed, as the
  upstream collector patches them away;
- an object whose owners are all absent is deleted through the store's normal delete path (actor
  ``garbage-collector``, background propagation): pods terminate gracefully, and each removal cascades to the
  removed object's own dependents;
- foreground deletion: an owner deleted with ``Foreground`` carries the ``foregroundDeletion`` finalizer; its
  dependents are deleted, and once none that blocks (``blockOwnerDeletion: true``) remains, the finalizer goes;
- orphan deletion: an owner deleted with ``Orphan`` carries the ``orphan`` finalizer and a deletionTimestamp;
  the store's orphaning step (``memory_deletion``) strips its references from every dependent, then removes the
  finalizer, and only then is the owner gone. The simulator runs that step at once; ``up`` runs it a moment
  later, as the garbage collector's informers would, so an owner being deleted is seen as such meanwhile.

The collector has zero latency in the simulator: it runs synchronously at the end of the write that called for it,
so the writer's next read already sees the result (a real cluster collects within seconds). It stays cheap with
thousands of objects: dependents are indexed by owner uid, and only the objects a write touched are examined.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from rollwise.api.meta import Obj, shares_owner_references, uid_of
from rollwise.cluster.resources import GroupKind

__all__ = ["FOREGROUND_FINALIZER", "GC_ACTOR", "ORPHAN_FINALIZER", "GarbageCollector", "GcHost", "Key"]

Key = tuple[GroupKind, str, str]
"""``(resource, namespace, name)``: how the store addresses an object (namespace ``""`` if cluster-scoped)."""

GC_ACTOR = "garbage-collector"
FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"

_DEPENDENT = 0  # check one object's owners
_DEPENDENTS = 1  # check every dependent of a uid
_OWNER = 2  # may a foreground-deleting owner drop its finalizer?


class GcHost(Protocol):
    """What the collector needs from the store: lookups, and writes that bypass fault injection and admission."""

    def by_key(self, key: Key) -> Obj | None:
        """The stored object at ``key``, or None."""
        ...

    def by_uid(self, uid: str) -> Obj | None:
        """The stored object with that uid, or None if no object has it (any more)."""
        ...

    def key_of(self, obj: Obj) -> Key:
        """The key of a stored object."""
        ...

    def delete(self, key: Key, *, foreground: bool) -> None:
        """Delete through the normal path as ``garbage-collector`` (background, or foreground if asked)."""
        ...

    def drop_owner_refs(self, key: Key, uids: Sequence[str]) -> None:
        """Remove the owner references naming any of ``uids`` from the object at ``key``."""
        ...

    def drop_finalizer(self, key: Key, finalizer: str) -> None:
        """Remove ``finalizer`` from the object at ``key`` (which may remove the object)."""
        ...


def _owner_refs(obj: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if obj is None:
        return []
    return obj.get("metadata", {}).get("ownerReferences") or []


def _owner_uids(refs: Iterable[Mapping[str, Any]]) -> list[str]:
    # Ordered and de-duplicated: the order of collection must not depend on string hashing (determinism).
    return list(dict.fromkeys(str(ref.get("uid") or "") for ref in refs))


def _waiting(obj: Mapping[str, Any] | None) -> bool:
    """The object is being deleted in the foreground: it waits for its dependents."""
    if obj is None:
        return False
    meta = obj.get("metadata", {})
    return meta.get("deletionTimestamp") is not None and FOREGROUND_FINALIZER in (meta.get("finalizers") or ())


class GarbageCollector:
    """The dependents-by-owner-uid index plus the work queue of checks that writes call for.

    The store calls ``observe(key, old, new)`` after every write (``new`` None for a removal) and ``run(host)``
    at the end of each API call. ``run`` is not re-entrant: writes it makes only queue more work for the same run.
    """

    __slots__ = ("_by_kind", "_dependents", "_queue", "_running")

    def __init__(self) -> None:
        self._dependents: dict[str, dict[Key, None]] = {}
        self._by_kind: dict[tuple[str, Any], dict[Key, None]] = {}
        """The same index split by resource (a key's first part): a set's revisions without walking its pods."""
        self._queue: deque[tuple[int, Any]] = deque()
        self._running = False

    def fork(self) -> GarbageCollector:
        """A collector with a copy of this one's owner index and nothing queued (``MemoryCluster.fork``)."""
        twin = GarbageCollector()
        twin._dependents = {uid: dict(keys) for uid, keys in self._dependents.items()}
        twin._by_kind = {at: dict(keys) for at, keys in self._by_kind.items()}
        return twin

    def dependents(self, uid: str) -> list[Key]:
        """The keys of the objects that have an owner reference to ``uid``, in the order they gained it."""
        return list(self._dependents.get(uid, ()))

    def dependents_of_kind(self, uid: str, resource: object) -> list[Key]:
        """``dependents(uid)`` of one resource only (keys whose first part is ``resource``), in the same order."""
        return list(self._by_kind.get((uid, resource), ()))

    def observe(self, key: Key, old: Obj | None, new: Obj | None) -> None:
        """Keep the index current after a write and queue the checks it calls for."""
        if old is not None and new is not None and shares_owner_references(old, new) and \
                new["metadata"].get("deletionTimestamp") is None:
            return  # the index stands, and no deletion waits on anything: no check is due
        old_refs, new_refs = _owner_refs(old), _owner_refs(new)
        if old_refs != new_refs:
            old_uids, new_uids = _owner_uids(old_refs), _owner_uids(new_refs)
            for uid in old_uids:
                if uid not in new_uids:
                    self._unlink(uid, key)
                # A foreground-deleting owner may have been waiting on this reference (or its blockOwnerDeletion).
                self._queue.append((_OWNER, uid))
            for uid in new_uids:
                if uid not in old_uids:
                    self._dependents.setdefault(uid, {})[key] = None
                    self._by_kind.setdefault((uid, key[0]), {})[key] = None
            if new is not None and new_uids:
                # Created or re-pointed: an owner named here may not exist (reference §6.3's stale claim).
                self._queue.append((_DEPENDENT, key))
        if new is None:
            if old is not None:
                # reference §6.2: an owner is gone, so its dependents may be garbage now.
                self._queue.append((_DEPENDENTS, uid_of(old)))
        elif _waiting(new) and not _waiting(old):
            self._queue.append((_DEPENDENTS, uid_of(new)))
            self._queue.append((_OWNER, uid_of(new)))

    def run(self, host: GcHost) -> None:
        """Work the queue until empty; the collector's own writes queue further checks (cascades)."""
        if self._running:
            return
        self._running = True
        try:
            while self._queue:
                what, arg = self._queue.popleft()
                if what == _DEPENDENT:
                    self._check_dependent(host, arg)
                elif what == _DEPENDENTS:
                    for key in self.dependents(arg):
                        self._check_dependent(host, key)
                else:
                    self._check_owner(host, arg)
        finally:
            self._running = False

    def _unlink(self, uid: str, key: Key) -> None:
        deps = self._dependents.get(uid)
        if deps is not None:
            deps.pop(key, None)
            if not deps:
                del self._dependents[uid]
        same_kind = self._by_kind.get((uid, key[0]))
        if same_kind is not None:
            same_kind.pop(key, None)
            if not same_kind:
                del self._by_kind[(uid, key[0])]

    def _check_dependent(self, host: GcHost, key: Key) -> None:
        obj = host.by_key(key)
        if obj is None or obj["metadata"].get("deletionTimestamp") is not None:
            return  # gone, or already terminating: upstream's collector leaves it to finish
        refs = _owner_refs(obj)
        if not refs:
            return
        present: list[str] = []
        absent: list[str] = []
        waiting = False
        for uid in _owner_uids(refs):
            owner = host.by_uid(uid) if uid else None
            if owner is None:
                absent.append(uid)
            elif _waiting(owner):
                absent.append(uid)
                waiting = True
            else:
                present.append(uid)
        if present:
            if absent:
                host.drop_owner_refs(key, absent)
            return
        host.delete(key, foreground=waiting)

    def _check_owner(self, host: GcHost, uid: str) -> None:
        owner = host.by_uid(uid) if uid else None
        if not _waiting(owner):
            return
        for key in self._dependents.get(uid, ()):
            dep = host.by_key(key)
            if any(ref.get("uid") == uid and ref.get("blockOwnerDeletion") for ref in _owner_refs(dep)):
                return
        assert owner is not None
        host.drop_finalizer(host.key_of(owner), FOREGROUND_FINALIZER)
