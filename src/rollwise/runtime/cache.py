"""The informer's indexed cache of one resource (client-go ``tools/cache`` ``thread_safe_store`` + indexers).

Objects are shared, read-only dicts, as ``MemoryCluster`` serves them. Indexes: by namespace, by the uid of the
controlling owner, and by label ``key=value``.

An update keeps the parts that did not change: each part of the new object equal to the cached one's (the spec, the
status, the labels...) is the cached one's (``_share``). A store does that by itself (a status write keeps the old
spec); objects decoded from the wire have no such sharing, and without it every memo keyed on a part's identity
(``api/memo.py``: validation, the stored template, the quiet context) missed on every event, the operator validating
each set and rebuilding its stored template on every reconcile.

``latest_rv`` is the newest resourceVersion the cache has seen (``LastStoreSyncResourceVersion``,
kubernetes/kubernetes#134827): the consistency check compares against it.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rollwise.api.errors import NotFound
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches
from rollwise.runtime.consistency import compare_resource_versions

__all__ = ["CacheReader", "Delta", "Store"]

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Delta:
    """One change the cache took: ``old`` is None for an add, ``new`` is None for a delete."""

    type: Literal["ADDED", "MODIFIED", "DELETED"]
    old: Obj | None
    new: Obj | None


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class Store:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._objects: dict[Key, Obj] = {}
        self._by_namespace: dict[str, set[Key]] = {}
        self._by_owner: dict[str, set[Key]] = {}
        self._by_label: dict[tuple[str, str], set[Key]] = {}
        self._uncontrolled: dict[str, set[Key]] = {}  # namespace -> objects no controller owns
        self._order: dict[str | None, builtins.list[Key]] = {}  # sorted keys per namespace (None: all), lazily
        self.latest_rv = ""

    # -- reads -----------------------------------------------------------------------------------------------

    def get(self, namespace: str, name: str) -> Obj | None:
        return self._objects.get((namespace, name))

    def list(self, namespace: str | None = None, *, selector: Mapping[str, Any] | None = None) -> builtins.list[Obj]:
        """Objects by namespace then name; a selector filters as ``Cluster.list`` does (empty matches nothing)."""
        order = self._order.get(namespace)
        if order is None:
            keys = self._objects.keys() if namespace is None else self._by_namespace.get(namespace, set())
            order = self._order[namespace] = sorted(keys)
        out = [self._objects[k] for k in order]
        return out if selector is None else [o for o in out if selector_matches(selector, labels(o))]

    def controlled_by(self, owner_uid: str) -> builtins.list[Obj]:
        return [self._objects[k] for k in sorted(self._by_owner.get(owner_uid, ()))]

    def uncontrolled(self, namespace: str) -> builtins.list[Obj]:
        """Objects in ``namespace`` without a controlling owner: the orphans a controller may adopt."""
        return [self._objects[k] for k in sorted(self._uncontrolled.get(namespace, ()))]

    def with_label(self, key: str, value: str) -> builtins.list[Obj]:
        return [self._objects[k] for k in sorted(self._by_label.get((key, value), ()))]

    def keys(self) -> builtins.list[Key]:
        return sorted(self._objects)

    def __len__(self) -> int:
        return len(self._objects)

    # -- writes (from the reflector only) ----------------------------------------------------------------------

    def apply(self, event_type: str, obj: Obj) -> Delta | None:
        """Take one watch event; returns what changed (None for a bookmark or a stale replay)."""
        self._see(_rv(obj))
        if event_type == "BOOKMARK":
            return None
        key = (namespace_of(obj), name_of(obj))
        old = self._objects.get(key)
        if event_type == "DELETED":
            if old is None:
                return None
            self._remove(key, old)
            return Delta("DELETED", old, None)
        if old is not None:
            obj = _share(old, obj)
        self._put(key, old, obj)
        return Delta("ADDED" if old is None else "MODIFIED", old, obj)

    def replace(self, items: Iterable[Obj], list_rv: str) -> builtins.list[Delta]:
        """Swap in a fresh list: adds and updates for what it holds, and a delete for every cached object it does
        not (``DeltaFIFO.Replace`` → ``DeletedFinalStateUnknown``), so nothing deleted during a gap stays behind."""
        fresh = {(namespace_of(o), name_of(o)): o for o in items}
        deltas: builtins.list[Delta] = []
        for key in [k for k in self._objects if k not in fresh]:
            gone = self._objects[key]
            self._remove(key, gone)
            deltas.append(Delta("DELETED", gone, None))
        for key, listed in sorted(fresh.items()):
            old = self._objects.get(key)
            if old is not None and _rv(old) == _rv(listed):
                continue
            obj = listed if old is None else _share(old, listed)
            self._put(key, old, obj)
            deltas.append(Delta("ADDED" if old is None else "MODIFIED", old, obj))
        self.latest_rv = ""
        self._see(list_rv)
        return deltas

    def _see(self, rv: str) -> None:
        if not rv:
            return
        try:
            newer = not self.latest_rv or compare_resource_versions(rv, self.latest_rv) > 0
        except ValueError:
            newer = True  # a server with opaque RVs: trust the order of delivery
        if newer:
            self.latest_rv = rv

    def _put(self, key: Key, old: Obj | None, obj: Obj) -> None:
        if old is not None:
            if labels(old) is labels(obj) and _controller_uid(old) == _controller_uid(obj):
                self._objects[key] = obj  # every index holds the key already: most updates are status changes
                return
            self._unindex(key, old)
        else:
            self._order.pop(key[0], None)
            self._order.pop(None, None)
        self._objects[key] = obj
        self._by_namespace.setdefault(key[0], set()).add(key)
        ref = controller_of(obj)
        if ref is not None and ref.get("uid"):
            self._by_owner.setdefault(str(ref["uid"]), set()).add(key)
        else:
            self._uncontrolled.setdefault(key[0], set()).add(key)
        for k, v in labels(obj).items():
            self._by_label.setdefault((k, v), set()).add(key)

    def _remove(self, key: Key, old: Obj) -> None:
        self._unindex(key, old)
        del self._objects[key]
        self._order.pop(key[0], None)
        self._order.pop(None, None)

    def _unindex(self, key: Key, old: Obj) -> None:
        _discard(self._by_namespace, key[0], key)
        ref = controller_of(old)
        if ref is not None and ref.get("uid"):
            _discard(self._by_owner, str(ref["uid"]), key)
        else:
            _discard(self._uncontrolled, key[0], key)
        for k, v in labels(old).items():
            _discard(self._by_label, (k, v), key)


_SHARED_METADATA = ("labels", "annotations", "ownerReferences", "finalizers")


def _share(old: Obj, new: Obj) -> Obj:
    """``new``, with each top-level part and each of ``_SHARED_METADATA`` that equals ``old``'s replaced by
    ``old``'s. ``new`` itself is left alone (a store's objects are read-only); equal parts compare at C speed."""
    out = _parts_from(old, new, [key for key in new if key != "metadata"])
    meta, old_meta = new.get("metadata"), old.get("metadata")
    if isinstance(meta, dict) and isinstance(old_meta, dict) and meta is not old_meta:
        shared = _parts_from(old_meta, meta, _SHARED_METADATA)
        if shared is not meta:
            out = {**out, "metadata": shared}
    return out


def _parts_from(old: Mapping[str, Any], new: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``new``, or a copy of it in which each of ``keys`` whose value (a mapping or a list) equals ``old``'s is
    ``old``'s."""
    out = new
    for key in keys:
        value, was = new.get(key), old.get(key)
        if isinstance(value, dict | list) and was is not value and was == value:
            if out is new:
                out = dict(new)
            out[key] = was
    return out


def _controller_uid(obj: Obj) -> object:
    ref = controller_of(obj)
    return None if ref is None else ref.get("uid")


def _discard(index: dict[Any, set[Key]], bucket: Any, key: Key) -> None:
    keys = index.get(bucket)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[bucket]


class CacheReader:
    """The read verbs of ``Cluster`` (``get``, ``list``) over informer stores, one per kind, so
    ``runtime.views.set_view`` builds a controller's view from the cache exactly as from a cluster."""

    def __init__(self, stores: Mapping[str, Store]) -> None:
        self.stores = dict(stores)

    def get(self, kind: str, namespace: str, name: str) -> Obj:
        obj = self.stores[kind].get(namespace or "default", name) if kind in self.stores else None
        if obj is None:
            raise NotFound(f'{kind} "{name}" not found in the cache')
        return obj

    def list(self, kind: str, namespace: str | None = None, *,
             selector: Mapping[str, Any] | None = None) -> builtins.list[Obj]:
        store = self.stores.get(kind)
        return [] if store is None else store.list(namespace, selector=selector)

    def controlled_by(self, kind: str, owner_uid: str) -> builtins.list[Obj]:
        """Objects whose controlling owner has ``owner_uid`` (from the index, not a scan)."""
        store = self.stores.get(kind)
        return [] if store is None else store.controlled_by(owner_uid)

    def uncontrolled(self, kind: str, namespace: str) -> builtins.list[Obj]:
        store = self.stores.get(kind)
        return [] if store is None else store.uncontrolled(namespace or "default")
