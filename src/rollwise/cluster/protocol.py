"""The one seam between rollwise and a Kubernetes API: the ``Cluster`` protocol and the ``Change`` feed entry.

Controllers never see this (they return Plans); drivers, the simulated kubelet and scenario steps write through it.
``rollwise.cluster.store.memory.MemoryCluster`` implements it in memory; a client for the real API will implement the
same verbs, so a driver test that passes on one says something about the other (DESIGN principle 3).

Objects are API-shaped dicts (``rollwise.api.meta.Obj``). Errors are the ``ApiStatusError`` subclasses of
``rollwise.api.errors``: a verb either succeeds completely or raises and leaves the cluster unchanged.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from rollwise.api.meta import Obj
from rollwise.api.records import dataclass
from rollwise.cluster.resources import STATEFULSET_KINDS, GroupKind, ResourceRef

__all__ = ["ORPHAN", "Change", "ChangeType", "Cluster", "Propagation"]

ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]
Propagation = Literal["Background", "Foreground", "Orphan"]

ORPHAN: Propagation = "Orphan"

_SET_KINDS = frozenset(gk.kind for gk in STATEFULSET_KINDS)
_SET_GROUPS = frozenset(gk.group for gk in STATEFULSET_KINDS)


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One write, as a watch event: what changed, who wrote it and when (virtual seconds).

    ``obj`` is the object after the write; for ``DELETED`` it is the last state (with the resourceVersion of the
    removal). ``old`` is the object before the write, None for ``ADDED``. Both are read-only. ``kind`` and
    ``group`` together name the resource (``resource``): an ``apps/v1`` and an ``apps.rollwise.dev`` StatefulSet
    share the kind.
    """

    type: ChangeType
    kind: str
    namespace: str
    name: str
    obj: Obj
    old: Obj | None
    actor: str
    at: float
    group: str = ""

    @property
    def resource(self) -> GroupKind:
        return GroupKind(self.group, self.kind)

    @property
    def of_statefulset(self) -> bool:
        """A change of one of the resources rollwise's StatefulSet controller runs (``STATEFULSET_KINDS``); asked of
        every change a follower sees, so it builds no ``GroupKind``."""
        return self.kind in _SET_KINDS and self.group in _SET_GROUPS


class Cluster(Protocol):
    """The verbs a workload controller's world needs, with Kubernetes API server semantics.

    Every write takes ``actor`` (who makes it: ``user``, ``statefulset-controller``, ``kubelet``...), which the
    change feed records. Objects returned by reads are shared and must be treated as read-only; copy before changing.
    """

    def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        """The object of that resource, namespace and name. Raises NotFound if there is none.

        ``kind`` is a ``GroupKind``, a bare kind (``"Pod"``: the first resource of that kind in the resource
        table) or ``"Kind.group"``; so for every verb below."""
        ...

    def list(
        self, kind: ResourceRef, namespace: str | None = None, *, selector: Mapping[str, Any] | None = None
    ) -> builtins.list[Obj]:
        """Every object of ``kind`` in ``namespace`` (None: all namespaces) whose labels match ``selector`` (a
        LabelSelector dict; None: no filter; an empty selector matches nothing), sorted by namespace, then name."""
        ...

    def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        """Store a new object and return it with uid, resourceVersion, generation 1 and creationTimestamp set.

        Raises AlreadyExists if an object with that resource, namespace and name exists (even a terminating one), and
        Invalid if admission refuses it; in both cases nothing is stored.

        ``handed_over``: the caller never changes ``obj`` or its parts afterwards (an object in a plan, which is
        immutable, or one built for this call), so a store may keep its parts rather than copies.
        """
        ...

    def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        """Replace the object's metadata and spec (and status, for kinds without a status subresource).

        Server-owned fields (uid, creationTimestamp, deletion fields) are kept; ``generation`` is bumped when the
        spec changed. Raises NotFound if the object does not exist; Conflict if ``metadata.resourceVersion`` (or
        ``metadata.uid``) is given and stale; Invalid if admission refuses it. On error the object is unchanged.
        A terminating object left without finalizers (and without a pending grace period) is removed.
        """
        ...

    def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        """Replace only the object's ``status`` (the status subresource); everything else in ``obj`` is ignored.

        Raises NotFound if the object does not exist; Conflict if ``metadata.resourceVersion`` is given and stale;
        the object is unchanged on error. ``handed_over``: as for ``create``, of the status.
        """
        ...

    def patch(
        self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *, actor: str = "user"
    ) -> Obj:
        """Apply a JSON merge patch (RFC 7386) to metadata, spec and status alike, and return the result.

        ``metadata.resourceVersion`` and ``metadata.uid`` in the patch are preconditions. Raises NotFound if the
        object does not exist; Conflict if a precondition fails; Invalid if the patch renames the object or
        admission refuses the result. On error the object is unchanged.
        """
        ...

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
        """Request deletion. Returns the object if it remains (terminating: graceful pod deletion, finalizers,
        foreground propagation), or None if it is gone.

        Dependents are garbage-collected (Background, Foreground) or have their owner reference removed (Orphan).
        Raises NotFound if the object does not exist, Conflict if ``preconditions`` (``uid``, ``resourceVersion``)
        are stale, Invalid for a negative grace period or an unknown propagation; the object is unchanged on error.
        """
        ...

    def changes_since(self, cursor: int) -> tuple[builtins.list[Change], int]:
        """The changes written after position ``cursor``, oldest first, and the cursor to pass next time.

        Start from 0. Raises Gone if changes after ``cursor`` were already discarded (the consumer must re-list).
        """
        ...
