"""``MemoryCluster``: the simulated cluster, in memory and virtual time — a product feature and the fake for tests.

What it models, as far as workload controllers can tell:

- objects keyed by (kind, namespace, name); namespace defaults to ``default``; namespaces are implicit;
- deterministic uids (``uid-1``, ``uid-2``...), one global resourceVersion counter bumped by every write (a write
  that changes nothing included), ``generation`` (1 on create, +1 when ``spec`` changes or deletion is requested),
  optimistic concurrency (a stale ``resourceVersion`` or ``uid`` precondition raises Conflict);
- status subresource for StatefulSet, Pod and PersistentVolumeClaim (``update`` keeps the stored status,
  ``update_status`` changes only status); ``patch`` is a JSON merge patch over the whole object;
- graceful pod deletion (``deletionTimestamp``, ``deletionGracePeriodSeconds``; a pod in phase Failed or
  Succeeded has nothing to stop and goes at once), finalizers, and owner-reference garbage collection with
  Background, Foreground and Orphan propagation (``rollwise.cluster.gc``; synchronous: zero latency);
- an admission hook per kind (defaulting and validation), a change feed, write counts per actor and fault
  injection (like upstream's fake ``SetCreateStatefulPodError(err, after)``).

What it does not model: scheduling and nodes, namespaces as objects, field selectors, list/watch at a given
resourceVersion, strategic merge patch and server-side apply, RBAC, and status reset on create (a status in a
created object is kept, which tests use). ``deletionTimestamp`` is the time deletion was *requested* (the API
server adds the grace period to it); the grace period is in ``deletionGracePeriodSeconds``.

Reads return the stored dicts themselves, as an informer cache does: callers must not mutate them. Every write
stores a new dict, so an object once returned never changes afterwards. Unchanged parts may be shared between
versions, which is safe for the same reason.
"""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from rollwise.api.errors import AlreadyExists, ApiStatusError, Conflict, FieldError, Gone, Invalid, NotFound
from rollwise.api.meta import Obj, labels, selector_matches
from rollwise.cluster.faults import FaultPlan
from rollwise.cluster.gc import FOREGROUND_FINALIZER, GC_ACTOR, GarbageCollector, Key
from rollwise.cluster.patching import clone, merge_patch
from rollwise.cluster.protocol import Change, ChangeType, Propagation

__all__ = ["DEFAULT_NAMESPACE", "STATUS_SUBRESOURCE_KINDS", "VERBS", "MemoryCluster"]

DEFAULT_NAMESPACE = "default"
STATUS_SUBRESOURCE_KINDS = frozenset({"StatefulSet", "Pod", "PersistentVolumeClaim"})
VERBS = frozenset({"create", "update", "update_status", "patch", "delete"})
_PROPAGATIONS = ("Background", "Foreground", "Orphan")
_DEFAULT_POD_GRACE_SECONDS = 30
_SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")
_UNCOUNTED_KINDS = frozenset({"Event"})  # events are bookkeeping, not the API writes a summary counts

Admit = Callable[[Obj, Obj | None], Obj]


class _GcBridge:
    """The store as the garbage collector sees it (``rollwise.cluster.gc.GcHost``)."""

    __slots__ = ("_c",)

    def __init__(self, cluster: MemoryCluster) -> None:
        self._c = cluster

    def by_key(self, key: Key) -> Obj | None:
        return self._c._lookup(key)

    def by_uid(self, uid: str) -> Obj | None:
        key = self._c._uids.get(uid)
        return None if key is None else self._c._lookup(key)

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


class MemoryCluster:
    """An in-memory Kubernetes API server plus garbage collector, implementing ``rollwise.cluster.protocol.Cluster``.

    ``clock`` gives virtual seconds. ``admit[kind](new, old)`` runs on create (old None), update and patch: it
    returns the object to store (defaulted) or raises Invalid; it gets a private copy it may change in place.
    """

    def __init__(self, *, clock: Callable[[], float], admit: Mapping[str, Admit] | None = None) -> None:
        self._clock = clock
        self._admit: dict[str, Admit] = dict(admit or {})
        self._kinds: dict[str, dict[str, dict[str, Obj]]] = {}  # kind -> namespace -> name -> object
        self._order: dict[tuple[str, str], builtins.list[str]] = {}  # sorted names, rebuilt after add/remove
        self._uids: dict[str, Key] = {}
        self._count = 0
        self._rv = 0
        self._uid_seq = 0
        self._name_seq = 0
        self._changes: builtins.list[Change] = []
        self._base = 0  # feed position of _changes[0]; earlier changes were compacted away
        self._faults = FaultPlan(VERBS)
        self._unowned: dict[tuple[str, str], dict[str, None]] = {}  # (kind, namespace) -> names without a controller
        self._gc = GarbageCollector()
        self._gc_host = _GcBridge(self)
        self.writes: Counter[str] = Counter()
        """Writes that reached the store, per actor (failed and no-op calls and Events excluded)."""

    # -- reads -------------------------------------------------------------------------------------------------

    def get(self, kind: str, namespace: str, name: str) -> Obj:
        """The stored object (shared, read-only). Raises NotFound if there is none."""
        obj = self._lookup((kind, namespace or DEFAULT_NAMESPACE, name))
        if obj is None:
            raise NotFound(f'{kind} "{name}" not found')
        return obj

    def list(
        self, kind: str, namespace: str | None = None, *, selector: Mapping[str, Any] | None = None
    ) -> builtins.list[Obj]:
        """Stored objects of ``kind`` (shared, read-only) by namespace, then name; only that kind is visited."""
        spaces = self._kinds.get(kind)
        if not spaces:
            return []
        if namespace is None:
            names = sorted(spaces)
        else:
            namespace = namespace or DEFAULT_NAMESPACE
            names = [namespace] if namespace in spaces else []
        out: builtins.list[Obj] = []
        for ns in names:
            bucket = spaces[ns]
            order = self._order.get((kind, ns))
            if order is None:
                order = self._order[(kind, ns)] = sorted(bucket)
            if selector is None:
                out.extend([bucket[n] for n in order])
            else:
                out.extend([o for n in order if selector_matches(selector, labels(o := bucket[n]))])
        return out

    def controlled_by(self, kind: str, owner_uid: str) -> builtins.list[Obj]:
        """Objects of ``kind`` with an owner reference to ``owner_uid`` (from the collector's index, not a scan),
        sorted by name. A controller's informer would index its cache the same way."""
        found = [obj for k in self._gc.dependents(owner_uid) if k[0] == kind and (obj := self._lookup(k)) is not None]
        return sorted(found, key=lambda o: o["metadata"]["name"])

    def uncontrolled(self, kind: str, namespace: str) -> builtins.list[Obj]:
        """Objects of ``kind`` in ``namespace`` that no controller owns (orphans a controller may adopt)."""
        bucket = self._kinds.get(kind, {}).get(namespace or DEFAULT_NAMESPACE, {})
        names = self._unowned.get((kind, namespace or DEFAULT_NAMESPACE), {})
        return [bucket[n] for n in sorted(names) if n in bucket]

    def objects(self) -> Iterator[Obj]:
        """Every stored object (a snapshot: writing while iterating is fine), for invariants and debugging."""
        snapshot = [obj for spaces in self._kinds.values() for bucket in spaces.values() for obj in bucket.values()]
        return iter(snapshot)

    def __len__(self) -> int:
        return self._count

    def fork(self, *, clock: Callable[[], float] | None = None) -> MemoryCluster:
        """An independent store holding the same objects, uids and indexes (a state explorer branches from it).

        Objects are shared, which is safe because a stored dict is never changed. The copy starts with an empty
        change feed, no write counts and no injected faults."""
        twin = MemoryCluster(clock=clock or self._clock, admit=self._admit)
        twin._kinds = {kind: {ns: dict(bucket) for ns, bucket in spaces.items()}
                       for kind, spaces in self._kinds.items()}
        twin._uids = dict(self._uids)
        twin._count, twin._rv, twin._uid_seq, twin._name_seq = self._count, self._rv, self._uid_seq, self._name_seq
        twin._unowned = {key: dict(names) for key, names in self._unowned.items()}
        twin._gc = self._gc.fork()
        twin._gc_host = _GcBridge(twin)
        return twin

    # -- writes ------------------------------------------------------------------------------------------------

    def create(self, obj: Obj, *, actor: str = "user") -> Obj:
        """Store a copy of ``obj`` with server fields set. AlreadyExists if the key is taken (even terminating)."""
        kind = _kind_of(obj)
        self._check_fault("create", kind)
        new = clone(obj)
        meta = new["metadata"] = dict(new.get("metadata") or {})
        meta["namespace"] = meta.get("namespace") or DEFAULT_NAMESPACE
        if not meta.get("name"):
            if not meta.get("generateName"):
                raise Invalid(errors=[FieldError(path="metadata.name", rule="name or generateName is required",
                                                 kind="Required value")])
            self._name_seq += 1
            meta["name"] = f"{meta['generateName']}{self._name_seq:05d}"
        key = (kind, meta["namespace"], str(meta["name"]))
        if self._lookup(key) is not None:
            raise AlreadyExists(f'{kind} "{key[2]}" already exists')
        for field in (*_SERVER_OWNED, "resourceVersion", "generation"):
            meta.pop(field, None)
        if kind == "Pod" and not (new.get("status") or {}).get("phase"):
            new["status"] = {**(new.get("status") or {}), "phase": "Pending"}  # the API server's pod default
        new = self._admitted(kind, new, None)
        meta = new["metadata"]
        self._uid_seq += 1
        meta["uid"] = f"uid-{self._uid_seq}"
        meta["creationTimestamp"] = self._clock()
        meta["generation"] = 1
        self._write(key, None, new, actor)
        self._gc.run(self._gc_host)
        return new

    def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        """Replace metadata and spec (status too for kinds without a status subresource); see ``Cluster.update``."""
        kind = _kind_of(obj)
        self._check_fault("update", kind)
        key = _key_of(kind, obj)
        old = self._require(key)
        _check_preconditions(obj.get("metadata"), old, key)
        new = clone(obj)
        new["metadata"] = dict(new.get("metadata") or {})
        if kind in STATUS_SUBRESOURCE_KINDS:
            new.pop("status", None)
            if "status" in old:
                new["status"] = old["status"] if kind not in self._admit else clone(old["status"])
        return self._replace(key, old, new, actor)

    def update_status(self, obj: Obj, *, actor: str = "user") -> Obj:
        """Replace only ``status``; see ``Cluster.update_status``. Admission does not run on status writes."""
        kind = _kind_of(obj)
        self._check_fault("update_status", kind)
        key = _key_of(kind, obj)
        old = self._require(key)
        _check_preconditions(obj.get("metadata"), old, key)
        new = {**old, "metadata": dict(old["metadata"])}
        if obj.get("status") is None:
            new.pop("status", None)
        else:
            new["status"] = clone(obj["status"])
        self._write(key, old, new, actor)
        return new

    def patch(self, kind: str, namespace: str, name: str, merge: Mapping[str, Any], *, actor: str = "user") -> Obj:
        """JSON merge patch over metadata, spec and status alike (scenario ``patch`` steps, adoption, release)."""
        self._check_fault("patch", kind)
        key = (kind, namespace or DEFAULT_NAMESPACE, name)
        old = self._require(key)
        patch_meta = merge.get("metadata")
        _check_preconditions(patch_meta if isinstance(patch_meta, Mapping) else None, old, key)
        new = merge_patch(old, merge)
        new["metadata"] = dict(new.get("metadata") or {})
        if _key_of(str(new.get("kind", "")), new) != key:
            raise Invalid(errors=[FieldError(path="metadata.name", rule="a patch cannot change kind, namespace or "
                                             "name", value=new["metadata"].get("name"))])
        if kind in self._admit:
            new = clone(new)  # the hook may change it in place; unpatched parts are shared with the stored object
        return self._replace(key, old, new, actor)

    def delete(
        self,
        kind: str,
        namespace: str,
        name: str,
        *,
        grace_period_seconds: float | None = None,
        propagation: Propagation = "Background",
        actor: str = "user",
    ) -> Obj | None:
        """Request deletion; the object if it remains (terminating), else None. See ``Cluster.delete``."""
        self._check_fault("delete", kind)
        if propagation not in _PROPAGATIONS:
            raise Invalid(errors=[FieldError(path="propagationPolicy", rule=f"must be one of {_PROPAGATIONS}",
                                             value=propagation, kind="Unsupported value")])
        if grace_period_seconds is not None and grace_period_seconds < 0:
            raise Invalid(errors=[FieldError(path="gracePeriodSeconds", rule="must be greater than or equal to 0",
                                             value=grace_period_seconds)])
        key = (kind, namespace or DEFAULT_NAMESPACE, name)
        obj = self._require(key)
        uid = obj["metadata"].get("uid")
        if propagation == "Orphan":
            # Upstream's collector strips the references (orphan finalizer) before the owner goes; here at once.
            for dep in self._gc.dependents(str(uid)):
                self._drop_owner_refs(dep, [str(uid)])
            obj = self._require(key)
        self._delete(key, obj, grace=grace_period_seconds, foreground=propagation == "Foreground", actor=actor)
        self._gc.run(self._gc_host)
        current = self._lookup(key)
        return current if current is not None and current["metadata"].get("uid") == uid else None

    # -- the change feed, write accounting and fault injection ---------------------------------------------------

    @property
    def cursor(self) -> int:
        """The feed position after the latest change: ``changes_since(cluster.cursor)`` returns only newer ones."""
        return self._base + len(self._changes)

    def changes_since(self, cursor: int) -> tuple[builtins.list[Change], int]:
        """Changes after ``cursor`` and the new cursor. Gone if ``cursor`` is older than the last ``compact``."""
        if cursor < self._base:
            raise Gone(f"changes before position {self._base} were compacted (asked from {cursor})")
        if cursor > self.cursor:
            raise ValueError(f"cursor {cursor} is ahead of the feed ({self.cursor})")
        return self._changes[cursor - self._base:], self.cursor

    def compact(self, cursor: int) -> None:
        """Discard the changes before ``cursor`` (consumed by every reader), so memory stays bounded."""
        drop = min(cursor, self.cursor) - self._base
        if drop > 0:
            del self._changes[:drop]
            self._base += drop

    def write_count(self, actor: str | None = None) -> int:
        """Writes that reached the store by ``actor``, or by everyone (Events and failed calls never count)."""
        return self.writes[actor] if actor is not None else sum(self.writes.values())

    def inject(self, verb: str, kind: str, error: ApiStatusError, *, after: int = 0, times: int = 1) -> None:
        """Make the (after+1)-th call of ``verb`` on ``kind`` from now, and the ``times - 1`` calls after it, raise
        ``error`` without writing. Several injections count calls independently. The collector is not affected."""
        self._faults.add(verb, kind, error, after=after, times=times)

    # -- internals ---------------------------------------------------------------------------------------------

    def _lookup(self, key: Key) -> Obj | None:
        spaces = self._kinds.get(key[0])
        if spaces is None:
            return None
        bucket = spaces.get(key[1])
        return None if bucket is None else bucket.get(key[2])

    def _require(self, key: Key) -> Obj:
        obj = self._lookup(key)
        if obj is None:
            raise NotFound(f'{key[0]} "{key[2]}" not found')
        return obj

    def _check_fault(self, verb: str, kind: str) -> None:
        self._faults.check(verb, kind)

    def _admitted(self, kind: str, new: Obj, old: Obj | None) -> Obj:
        hook = self._admit.get(kind)
        if hook is None:
            return new
        admitted = hook(new, old)
        admitted["metadata"] = dict(admitted.get("metadata") or {})
        return admitted

    def _replace(self, key: Key, old: Obj, new: Obj, actor: str) -> Obj:
        """The common tail of update and patch: server-owned fields, finalizer rule, admission, generation."""
        meta, old_meta = new["metadata"], old["metadata"]
        meta["namespace"] = key[1]
        for field in _SERVER_OWNED:
            if field in old_meta:
                meta[field] = old_meta[field]
            else:
                meta.pop(field, None)
        if old_meta.get("deletionTimestamp") is not None:
            added = [f for f in meta.get("finalizers") or () if f not in (old_meta.get("finalizers") or ())]
            if added:
                raise Invalid(errors=[FieldError(path="metadata.finalizers", kind="Forbidden", rule="no new "
                                                 f"finalizers can be added if the object is being deleted: {added}")])
        new = self._admitted(key[0], new, old)
        meta = new["metadata"]
        meta["generation"] = old_meta.get("generation", 1) + (new.get("spec") != old.get("spec"))
        self._write(key, old, new, actor)
        self._gc.run(self._gc_host)
        return new

    def _delete(self, key: Key, obj: Obj, *, grace: float | None, foreground: bool, actor: str) -> None:
        """The delete path shared by callers and the collector; writes nothing when there is nothing to do."""
        meta = obj["metadata"]
        terminating = meta.get("deletionTimestamp") is not None
        if key[0] == "Pod":
            if grace is None:
                grace = (obj.get("spec") or {}).get("terminationGracePeriodSeconds", _DEFAULT_POD_GRACE_SECONDS)
            if (obj.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
                grace = 0  # the API server: a terminated pod has nothing left to stop
            current = meta.get("deletionGracePeriodSeconds")
            if terminating and current is not None and grace >= current:
                return  # a repeated delete may only shorten the grace period
        elif terminating:
            return
        else:
            grace = 0
        finalizers = list(meta.get("finalizers") or ())
        if foreground and not terminating and FOREGROUND_FINALIZER not in finalizers:
            finalizers.append(FOREGROUND_FINALIZER)
        if grace == 0 and not finalizers:
            self._write(key, obj, {**obj, "metadata": dict(meta)}, actor, remove=True)
            return
        new_meta = {**meta, "deletionGracePeriodSeconds": grace}
        if not terminating:
            new_meta["deletionTimestamp"] = self._clock()
        if finalizers:
            new_meta["finalizers"] = finalizers
        new_meta["generation"] = meta.get("generation", 1) + 1  # the API server bumps it on a deletion request
        self._write(key, obj, {**obj, "metadata": new_meta}, actor)

    def _drop_owner_refs(self, key: Key, uids: Sequence[str]) -> None:
        obj = self._lookup(key)
        if obj is None:
            return
        refs = obj["metadata"].get("ownerReferences") or []
        kept = [ref for ref in refs if str(ref.get("uid") or "") not in uids]
        if len(kept) == len(refs):
            return
        meta = dict(obj["metadata"])
        if kept:
            meta["ownerReferences"] = kept
        else:
            del meta["ownerReferences"]
        self._write(key, obj, {**obj, "metadata": meta}, GC_ACTOR)

    def _write(self, key: Key, old: Obj | None, new: Obj, actor: str, *, remove: bool = False) -> None:
        """Commit one write: resourceVersion, indexes, collector, feed, counter. ``new`` owns its metadata dict.

        A terminating object left without finalizers and without a pending grace period is removed instead
        (the API server's rule: a pod still in its grace period waits for the kubelet's final delete).
        """
        kind, ns, name = key
        meta = new["metadata"]
        if (not remove and old is not None and meta.get("deletionTimestamp") is not None
                and not meta.get("finalizers") and not meta.get("deletionGracePeriodSeconds")):
            remove = True
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        change: ChangeType
        if remove:
            spaces = self._kinds[kind]
            del spaces[ns][name]
            if not spaces[ns]:
                del spaces[ns]
            self._order.pop((kind, ns), None)
            self._uids.pop(str(meta.get("uid")), None)
            self._count -= 1
            change = "DELETED"
        else:
            bucket = self._kinds.setdefault(kind, {}).setdefault(ns, {})
            if name not in bucket:
                self._order.pop((kind, ns), None)
                self._uids[str(meta["uid"])] = key
                self._count += 1
            bucket[name] = new
            change = "ADDED" if old is None else "MODIFIED"
        unowned = self._unowned.setdefault((kind, ns), {})
        if remove or any(r.get("controller") for r in meta.get("ownerReferences") or ()):
            unowned.pop(name, None)
        else:
            unowned[name] = None
        self._gc.observe(key, old, None if remove else new)
        self._changes.append(Change(type=change, kind=kind, namespace=ns, name=name, obj=new, old=old, actor=actor,
                                    at=self._clock()))
        if kind not in _UNCOUNTED_KINDS:
            self.writes[actor] += 1


def _kind_of(obj: Mapping[str, Any]) -> str:
    kind = obj.get("kind")
    if not kind:
        raise Invalid(errors=[FieldError(path="kind", rule="kind is required", kind="Required value")])
    return str(kind)


def _key_of(kind: str, obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    if not meta.get("name"):
        raise Invalid(errors=[FieldError(path="metadata.name", rule="name is required", kind="Required value")])
    return kind, str(meta.get("namespace") or DEFAULT_NAMESPACE), str(meta["name"])


def _check_preconditions(meta: Mapping[str, Any] | None, stored: Obj, key: Key) -> None:
    """Optimistic concurrency: a given resourceVersion or uid must be the stored one."""
    if not meta:
        return
    rv = meta.get("resourceVersion")
    if rv not in (None, "") and str(rv) != stored["metadata"]["resourceVersion"]:
        raise Conflict(f'Operation cannot be fulfilled on {key[0]} "{key[2]}": the object has been modified; '
                       "please apply your changes to the latest version and try again")
    uid = meta.get("uid")
    if uid and uid != stored["metadata"]["uid"]:
        raise Conflict(f'Precondition failed on {key[0]} "{key[2]}": UID in precondition: {uid}, '
                       f"UID in object meta: {stored['metadata']['uid']}")
