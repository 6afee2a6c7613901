"""A ``Cluster`` that tells the consistency store about every write it carries for one owner.

The controller's executor writes through it; each successful write's returned resourceVersion is recorded
against the set being reconciled (KEP-5647 ``WroteAt``), including the pod returned by a graceful delete. The
explorer writes through ``RecordingCluster``; the operator through ``AsyncRecordingCluster``, the same notes over
the executor's async verbs (``execute.AsyncVerbs``). ``prepare`` changes what is created (the operator's informer
label).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Change, Cluster, Propagation
from rollwise.cluster.resources import GroupKind, ResourceRef
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.execute import AsyncVerbs

__all__ = ["AsyncRecordingCluster", "RecordingCluster"]

Inner = TypeVar("Inner")


class _Notes(Generic[Inner]):
    def __init__(self, inner: Inner, consistency: ConsistencyStore, *, owner: Hashable, owner_uid: str,
                 tracked: frozenset[str] | None = None, prepare: Callable[[Obj], Obj] | None = None) -> None:
        self.inner = inner
        self.consistency = consistency
        self.owner = owner
        self.owner_uid = owner_uid
        self.tracked = tracked
        """Kinds an informer watches (None: all); a write to any other kind could never be seen, so is not noted."""
        self.prepare = prepare

    def _note(self, ref: ResourceRef, obj: Obj | None) -> Obj | None:
        kind = ref.kind if isinstance(ref, GroupKind) else ref.partition(".")[0]  # informers are named by kind
        if obj is not None and (self.tracked is None or kind in self.tracked):
            rv = str(obj.get("metadata", {}).get("resourceVersion") or "")
            self.consistency.wrote_at(self.owner, self.owner_uid, kind, rv)
        return obj


class RecordingCluster(_Notes[Cluster]):
    def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        return self.inner.get(kind, namespace, name)

    def list(self, kind: ResourceRef, namespace: str | None = None, *,
             selector: Mapping[str, Any] | None = None) -> builtins.list[Obj]:
        return self.inner.list(kind, namespace, selector=selector)

    def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        out = self.inner.create(obj if self.prepare is None else self.prepare(obj), actor=actor,
                                handed_over=handed_over)
        self._note(str(obj.get("kind")), out)
        return out

    def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        out = self.inner.update(obj, actor=actor)
        self._note(str(obj.get("kind")), out)
        return out

    def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        out = self.inner.update_status(obj, actor=actor, handed_over=handed_over)
        self._note(str(obj.get("kind")), out)
        return out

    def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *,
              actor: str = "user") -> Obj:
        out = self.inner.patch(kind, namespace, name, merge, actor=actor)
        self._note(kind, out)
        return out

    def delete(self, kind: ResourceRef, namespace: str, name: str, *, grace_period_seconds: float | None = None,
               propagation: Propagation = "Background", actor: str = "user") -> Obj | None:
        out = self.inner.delete(kind, namespace, name, grace_period_seconds=grace_period_seconds,
                                propagation=propagation, actor=actor)
        return self._note(kind, out)

    def changes_since(self, cursor: int) -> tuple[builtins.list[Change], int]:
        return self.inner.changes_since(cursor)


class AsyncRecordingCluster(_Notes[AsyncVerbs]):
    async def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        return await self.inner.get(kind, namespace, name)

    async def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        out = await self.inner.create(obj if self.prepare is None else self.prepare(obj), actor=actor,
                                      handed_over=handed_over)
        self._note(str(obj.get("kind")), out)
        return out

    async def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        out = await self.inner.update(obj, actor=actor)
        self._note(str(obj.get("kind")), out)
        return out

    async def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        out = await self.inner.update_status(obj, actor=actor, handed_over=handed_over)
        self._note(str(obj.get("kind")), out)
        return out

    async def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *,
                    actor: str = "user") -> Obj:
        out = await self.inner.patch(kind, namespace, name, merge, actor=actor)
        self._note(kind, out)
        return out

    async def delete(self, kind: ResourceRef, namespace: str, name: str, *,
                     grace_period_seconds: float | None = None, propagation: Propagation = "Background",
                     actor: str = "user") -> Obj | None:
        out = await self.inner.delete(kind, namespace, name, grace_period_seconds=grace_period_seconds,
                                      propagation=propagation, actor=actor)
        return self._note(kind, out)
