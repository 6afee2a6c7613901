"""The memory store's object storage: objects by resource, namespace and name, with the indexes reads need.

Kept apart from the verbs (``rollwise.cluster.store.memory``) so the rules of storage — sorted listing without
re-sorting on every read, uid lookup, the set of objects no controller owns — live in one small place.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Mapping
from typing import Any

from rollwise.api.meta import Obj, labels, selector_matches, shares_owner_references
from rollwise.cluster.resources import GroupKind
from rollwise.cluster.store.gc import Key

__all__ = ["ObjectIndex"]


class ObjectIndex:
    """Stored objects (shared, read-only) and their indexes; ``put`` and ``remove`` keep every index current."""

    __slots__ = ("_listed", "_objects", "_order", "_unowned", "count", "uids")

    def __init__(self) -> None:
        self._objects: dict[GroupKind, dict[str, dict[str, Obj]]] = {}  # resource -> namespace -> name -> object
        self._order: dict[tuple[GroupKind, str], builtins.list[str]] = {}  # sorted names, rebuilt after add/remove
        # The objects in name order, rebuilt after any write there: controllers list the same few resources many
        # times between writes (the explorer ~50 times per state). Never changed in place, so forks share them.
        self._listed: dict[tuple[GroupKind, str], builtins.list[Obj]] = {}
        self._unowned: dict[tuple[GroupKind, str], dict[str, None]] = {}  # names without a controller
        self.uids: dict[str, Key] = {}
        self.count = 0

    def fork(self) -> ObjectIndex:
        """An independent index over the same (immutable) objects: later puts and removes on either side do not
        show on the other."""
        twin = ObjectIndex()
        twin._objects = {gk: {ns: dict(bucket) for ns, bucket in spaces.items()}
                         for gk, spaces in self._objects.items()}
        twin._unowned = {key: dict(names) for key, names in self._unowned.items()}
        twin._order = dict(self._order)
        twin._listed = dict(self._listed)
        twin.uids = dict(self.uids)
        twin.count = self.count
        return twin

    def lookup(self, key: Key) -> Obj | None:
        spaces = self._objects.get(key[0])
        if spaces is None:
            return None
        bucket = spaces.get(key[1])
        return None if bucket is None else bucket.get(key[2])

    def put(self, key: Key, obj: Obj) -> None:
        gk, ns, name = key
        # get before setdefault: every write comes here, and setdefault would build an empty dict each time.
        spaces = self._objects.get(gk)
        if spaces is None:
            spaces = self._objects[gk] = {}
        bucket = spaces.get(ns)
        if bucket is None:
            bucket = spaces[ns] = {}
        held = bucket.get(name)
        self._listed.pop((gk, ns), None)
        if held is None:
            self._order.pop((gk, ns), None)
            self.uids[str(obj["metadata"]["uid"])] = key
            self.count += 1
        bucket[name] = obj
        if held is not None and shares_owner_references(held, obj):
            return  # whether it has a controller stands
        unowned = self._unowned.get((gk, ns))
        if unowned is None:
            unowned = self._unowned[(gk, ns)] = {}
        for ref in obj["metadata"].get("ownerReferences") or ():
            if ref.get("controller"):
                unowned.pop(name, None)
                return
        unowned[name] = None

    def remove(self, key: Key, uid: str) -> None:
        gk, ns, name = key
        spaces = self._objects[gk]
        del spaces[ns][name]
        if not spaces[ns]:
            del spaces[ns]
        self._order.pop((gk, ns), None)
        self._listed.pop((gk, ns), None)
        self.uids.pop(uid, None)
        self.count -= 1
        self._unowned.setdefault((gk, ns), {}).pop(name, None)

    def namespaces(self, gk: GroupKind) -> builtins.list[str]:
        return sorted(self._objects.get(gk, ()))

    def in_namespace(self, gk: GroupKind, ns: str, selector: Mapping[str, Any] | None) -> builtins.list[Obj]:
        """Objects of ``gk`` in ``ns`` by name; with a LabelSelector dict, only those it matches. The list is shared
        with the index: read it, never change it."""
        listed = self._listed.get((gk, ns))
        if listed is None:
            bucket = self._objects.get(gk, {}).get(ns)
            if not bucket:
                return []
            order = self._order.get((gk, ns))
            if order is None:
                order = self._order[(gk, ns)] = sorted(bucket)
            listed = self._listed[(gk, ns)] = [bucket[n] for n in order]
        if selector is None:
            return listed
        return [o for o in listed if selector_matches(selector, labels(o))]

    def unowned(self, gk: GroupKind, ns: str) -> builtins.list[Obj]:
        bucket = self._objects.get(gk, {}).get(ns, {})
        names = self._unowned.get((gk, ns), {})
        return [bucket[n] for n in sorted(names) if n in bucket]

    def __iter__(self) -> Iterator[Obj]:
        snapshot = [obj for spaces in self._objects.values() for bucket in spaces.values() for obj in bucket.values()]
        return iter(snapshot)
