"""``MemoryCluster``: the cluster in memory (on a virtual or a wall clock) — a product feature and the fake for tests.

What it models, as far as workload controllers can tell:

- objects keyed by resource (group and version-independent kind, ``rollwise.cluster.resources``), namespace and
  name; namespace defaults to ``default`` (cluster-scoped resources have none); namespaces are implicit;
- deterministic uids (``uid-1``, ``uid-2``...), one global resourceVersion counter bumped by every write (an update
  that changes nothing is none: it returns the stored object), ``generation`` (1 on create, +1 when ``spec`` changes
  or deletion is requested), optimistic concurrency (a stale resourceVersion or uid precondition: Conflict);
- status subresource where the resource table says so (``update`` keeps the stored status,
  ``update_status`` changes only status); ``patch`` is a JSON merge patch over the whole object;
- graceful pod deletion (``deletionTimestamp``, ``deletionGracePeriodSeconds``; a pod in phase Failed or
  Succeeded has nothing to stop and goes at once), finalizers, and owner-reference garbage collection with
  Background, Foreground and Orphan propagation (``gc``, ``memory_deletion``; synchronous: zero latency);
- an admission hook per resource (``rollwise.cluster.store.admission``), a change feed for the simulator, per-resource
  watches with label and field selectors and a bounded history (``watch``, ``memory_watches``), write counts per
  actor and fault injection (like upstream's fake ``SetCreateStatefulPodError(err, after)``);
- optional persistence: with a ``backing`` (``rollwise.cluster.store.persistence``) every committed write is kept.

What it does not model: scheduling and nodes, namespaces as objects, strategic merge patch and server-side apply
(the API server does those over ``update``), RBAC, and status reset on create (a status in a created object is
kept, which tests use). ``deletionTimestamp`` is the time deletion was *requested* (the API
server adds the grace period to it); the grace period is in ``deletionGracePeriodSeconds``.

Reads return the stored dicts themselves, as an informer cache does: callers must not mutate them. Every write
stores a new dict, so an object once returned never changes afterwards. Unchanged parts may be shared between
versions, which is safe for the same reason.
"""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rollwise.api.errors import AlreadyExists, ApiStatusError, FieldError, InternalError, Invalid, NotFound
from rollwise.api.meta import Obj, labels
from rollwise.api.values import clone
from rollwise.cluster.protocol import Change, ChangeType
from rollwise.cluster.resources import EVENT, EVENT_V1, POD, GroupKind, ResourceRef, ResourceTable
from rollwise.cluster.store.faults import FaultPlan
from rollwise.cluster.store.feed import ChangeFeed
from rollwise.cluster.store.gc import GarbageCollector, Key
from rollwise.cluster.store.memory_deletion import DeletionVerbs, GcBridge
from rollwise.cluster.store.memory_watches import WatchVerbs
from rollwise.cluster.store.patching import clone_sharing, merge_patch
from rollwise.cluster.store.persistence import DB_FILE, Backing, SqliteBacking, uuid_uids
from rollwise.cluster.store.preconditions import check_preconditions
from rollwise.cluster.store.selectors import FieldSelector, LabelSelector, field_selector_of, label_selector_of
from rollwise.cluster.store.server_fields import (
    check_no_new_finalizers,
    keep_server_fields,
    next_generation,
    strip_server_fields,
    unchanged,
)
from rollwise.cluster.store.storage import ObjectIndex
from rollwise.cluster.store.watch import DEFAULT_HISTORY_LIMIT, DEFAULT_MAX_PENDING, WatchHub

__all__ = ["DEFAULT_NAMESPACE", "VERBS", "Admit", "MemoryCluster"]

DEFAULT_NAMESPACE = "default"
VERBS = frozenset({"create", "update", "update_status", "patch", "delete"})
_UNCOUNTED = frozenset({EVENT_V1, EVENT})  # events are bookkeeping, not the API writes a summary counts

Admit = Callable[[Obj, Obj | None], Obj]
"""An admission hook: ``(new, old) -> object to store`` (defaulted), or raise Invalid."""


class MemoryCluster(WatchVerbs, DeletionVerbs):
    """An in-memory Kubernetes API server plus garbage collector, implementing ``rollwise.cluster.protocol.Cluster``.

    ``clock`` gives seconds (virtual or wall). ``admit[resource](new, old)`` runs on create (old None), update and
    patch: it returns the object to store (defaulted) or raises Invalid; it gets a private copy it may change in
    place. ``resources`` is the resource table (the built-in one by default). ``uid`` makes uids (deterministic
    ``uid-N`` by default; a persistent store passes uuid4). ``history_limit`` bounds each resource's watch history
    (0: none, a watch starts from now); ``watch_buffer`` each watch's undelivered events; ``feed_limit`` (None:
    unbounded until ``compact``) bounds the change feed for stores nobody drains.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float],
        admit: Mapping[GroupKind, Admit] | Mapping[str, Admit] | None = None,
        resources: ResourceTable | None = None,
        uid: Callable[[int], str] | None = None,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        watch_buffer: int = DEFAULT_MAX_PENDING,
        feed_limit: int | None = None,
        backing: Backing | None = None,
    ) -> None:
        self._clock = clock
        self.resources = resources or ResourceTable.builtin()
        self._admit: dict[GroupKind, Admit] = {self.resources.resolve(k): v for k, v in (admit or {}).items()}
        self._index = ObjectIndex()
        self._lookup = self._index.lookup  # the hottest read: one call, not two
        self._rv = 0
        self._uid_seq = 0
        self._name_seq = 0
        self._make_uid = uid or (lambda n: f"uid-{n}")
        self._feed = ChangeFeed(limit=feed_limit)
        self._faults = FaultPlan(VERBS)
        self._gc = GarbageCollector()
        self._backing = backing
        self._hub = WatchHub(limit=history_limit, max_pending=watch_buffer)
        self.writes: Counter[str] = Counter()
        """Writes that reached the store, per actor (failed and no-op calls and Events excluded)."""
        if backing is not None:
            self._load(backing)

    @classmethod
    def open(cls, data_dir: str | Path, *, clock: Callable[[], float], **options: Any) -> MemoryCluster:
        """A store kept in ``<data_dir>/state.db`` (created if missing): reopened, it has the same objects,
        resourceVersions and uids. Uids are uuid4 unless ``uid`` is given; other options as for the constructor."""
        directory = Path(data_dir)
        directory.mkdir(parents=True, exist_ok=True)
        options.setdefault("uid", uuid_uids)
        return cls(clock=clock, backing=SqliteBacking(directory / DB_FILE), **options)

    def close(self) -> None:
        """Close the backing (if any); the store must not be written afterwards."""
        if self._backing is not None:
            self._backing.close()
            self._backing = None

    # -- addressing --------------------------------------------------------------------------------------------

    def resource_of(self, obj: Mapping[str, Any]) -> GroupKind:
        """The resource an object belongs to (``ResourceTable.of``). Invalid if it has no kind."""
        if not obj.get("kind"):
            raise Invalid(errors=[FieldError(path="kind", rule="kind is required", kind="Required value")])
        return self.resources.of(obj)

    def _key(self, ref: ResourceRef, namespace: str | None, name: str) -> Key:
        gk, namespaced = self.resources.scoped(ref)
        return (gk, namespace or DEFAULT_NAMESPACE, name) if namespaced else (gk, "", name)

    def _key_of(self, gk: GroupKind, obj: Mapping[str, Any]) -> Key:
        meta = obj.get("metadata") or {}
        if not meta.get("name"):
            raise Invalid(errors=[FieldError(path="metadata.name", rule="name is required", kind="Required value")])
        return self._key(gk, meta.get("namespace"), str(meta["name"]))

    @property
    def resource_version(self) -> int:
        """The store's current resourceVersion: a list's ``metadata.resourceVersion``; watch from it for news."""
        return self._rv

    # -- reads -------------------------------------------------------------------------------------------------

    def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        """The stored object (shared, read-only). Raises NotFound if there is none."""
        key = self._key(kind, namespace, name)
        obj = self._lookup(key)
        if obj is None:
            raise NotFound(f'{key[0].kind} "{name}" not found')
        return obj

    def list(
        self,
        kind: ResourceRef,
        namespace: str | None = None,
        *,
        selector: Mapping[str, Any] | None = None,
        label_selector: str | LabelSelector | None = None,
        field_selector: str | FieldSelector | None = None,
    ) -> builtins.list[Obj]:
        """Stored objects of a resource (shared, read-only) by namespace, then name; only that resource is visited.

        ``selector`` is a LabelSelector dict (workload semantics: empty matches nothing); ``label_selector`` and
        ``field_selector`` are query strings (or parsed selectors) with API semantics (empty matches everything;
        BadRequest if malformed or the field is not supported)."""
        gk, namespaced = self.resources.scoped(kind)
        filtered = label_selector is not None or field_selector is not None
        if filtered:  # parsed first: a malformed selector is refused even when nothing is stored
            labels_sel = label_selector_of(label_selector)
            fields_sel = field_selector_of(field_selector, gk)
        every = namespace is None or not namespaced
        names = self._index.namespaces(gk) if every else [namespace or DEFAULT_NAMESPACE]
        out: builtins.list[Obj] = []
        for ns in names:
            out.extend(self._index.in_namespace(gk, ns, selector))
        if filtered and (labels_sel or fields_sel):
            out = [o for o in out if labels_sel.matches(labels(o)) and fields_sel.matches(o)]
        return out

    def controlled_by(self, kind: ResourceRef, owner_uid: str) -> builtins.list[Obj]:
        """Objects of a resource with an owner reference to ``owner_uid`` (from the collector's index, not a scan),
        sorted by name. A controller's informer would index its cache the same way."""
        gk = self.resources.resolve(kind)
        found = [obj for k in self._gc.dependents_of_kind(owner_uid, gk) if (obj := self._lookup(k)) is not None]
        return sorted(found, key=lambda o: o["metadata"]["name"])

    def uncontrolled(self, kind: ResourceRef, namespace: str) -> builtins.list[Obj]:
        """Objects of a resource in ``namespace`` that no controller owns (orphans a controller may adopt)."""
        gk, ns, _ = self._key(kind, namespace, "")
        return self._index.unowned(gk, ns)

    def objects(self) -> Iterator[Obj]:
        """Every stored object (a snapshot: writing while iterating is fine), for invariants and debugging."""
        return iter(self._index)

    def __len__(self) -> int:
        return self._index.count

    def fork(self, *, clock: Callable[[], float] | None = None) -> MemoryCluster:
        """An independent store holding the same objects, uids and indexes (a state explorer branches from it).

        Objects are shared, which is safe because a stored dict is never changed. The copy starts with an empty
        change feed, no write counts and no injected faults."""
        twin = MemoryCluster(clock=clock or self._clock, admit=self._admit, resources=self.resources,
                             uid=self._make_uid)
        twin._index = self._index.fork()
        twin._lookup = twin._index.lookup
        twin._rv, twin._uid_seq, twin._name_seq = self._rv, self._uid_seq, self._name_seq
        twin._gc = self._gc.fork()
        return twin

    # -- writes ------------------------------------------------------------------------------------------------

    def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        """Store a copy of ``obj`` (its parts, when ``handed_over``) with server fields set. AlreadyExists if the key
        is taken (even terminating)."""
        gk = self.resource_of(obj)
        self._faults.check("create", gk)
        new = dict(obj) if handed_over else clone(obj)
        meta = new["metadata"] = dict(new.get("metadata") or {})
        if self.resources.get(gk).namespaced:
            meta["namespace"] = meta.get("namespace") or DEFAULT_NAMESPACE
        else:
            meta.pop("namespace", None)
        if not meta.get("name"):
            if not meta.get("generateName"):
                raise Invalid(errors=[FieldError(path="metadata.name", rule="name or generateName is required",
                                                 kind="Required value")])
            self._name_seq += 1
            meta["name"] = f"{meta['generateName']}{self._name_seq:05d}"
        key = self._key_of(gk, new)
        if self._lookup(key) is not None:
            raise AlreadyExists(f'{gk.kind} "{key[2]}" already exists')
        strip_server_fields(meta)
        if gk == POD and not (new.get("status") or {}).get("phase"):
            new["status"] = {**(new.get("status") or {}), "phase": "Pending"}  # the API server's pod default
        new = self._admitted(gk, new, None)
        meta = new["metadata"]
        self._uid_seq += 1
        meta["uid"] = self._make_uid(self._uid_seq)
        meta["creationTimestamp"] = self._clock()
        meta["generation"] = 1
        self._write(key, None, new, actor)
        self._gc.run(GcBridge(self))
        return new

    def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        """Replace metadata and spec (status too for resources without a status subresource); see
        ``Cluster.update``."""
        gk = self.resource_of(obj)
        self._faults.check("update", gk)
        key = self._key_of(gk, obj)
        old = self._require(key)
        check_preconditions(obj.get("metadata"), old, kind=key[0].kind, name=key[2])
        new = clone(obj)
        new["metadata"] = dict(new.get("metadata") or {})
        if self.resources.get(gk).status:
            new.pop("status", None)
            if "status" in old:
                new["status"] = old["status"] if gk not in self._admit else clone(old["status"])
        return self._replace(key, old, new, actor)

    def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        """Replace only ``status``; see ``Cluster.update_status``. Admission does not run on status writes. A status
        handed over is stored as it is; another is copied, but for the parts it shares with the stored one."""
        gk = self.resource_of(obj)
        self._faults.check("update_status", gk)
        key = self._key_of(gk, obj)
        old = self._require(key)
        check_preconditions(obj.get("metadata"), old, kind=key[0].kind, name=key[2])
        new = {**old, "metadata": dict(old["metadata"])}
        if obj.get("status") is None:
            new.pop("status", None)
        else:
            new["status"] = obj["status"] if handed_over else clone_sharing(obj["status"], old.get("status"))
        return self._write(key, old, new, actor)

    def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *,
              actor: str = "user") -> Obj:
        """JSON merge patch over metadata, spec and status alike (scenario ``patch`` steps, adoption, release)."""
        key = self._key(kind, namespace, name)
        self._faults.check("patch", key[0])
        old = self._require(key)
        patch_meta = merge.get("metadata")
        check_preconditions(patch_meta if isinstance(patch_meta, Mapping) else None, old, kind=key[0].kind, name=key[2])
        new = merge_patch(old, merge)
        new["metadata"] = dict(new.get("metadata") or {})
        if not new.get("kind") or self._key_of(self.resources.of(new), new) != key:
            raise Invalid(errors=[FieldError(path="metadata.name", rule="a patch cannot change kind, namespace or "
                                             "name", value=new["metadata"].get("name"))])
        if key[0] in self._admit:
            new = clone(new)  # the hook may change it in place; unpatched parts are shared with the stored object
        return self._replace(key, old, new, actor)

    # -- write accounting and fault injection ---------------------------------------------------

    def write_count(self, actor: str | None = None) -> int:
        """Writes that reached the store by ``actor``, or by everyone (Events and failed calls never count)."""
        return self.writes[actor] if actor is not None else sum(self.writes.values())

    def inject(self, verb: str, kind: ResourceRef, error: ApiStatusError, *, after: int = 0, times: int = 1) -> None:
        """Make the (after+1)-th call of ``verb`` on a resource from now, and the ``times - 1`` calls after it,
        raise ``error`` without writing. Injections count calls independently. The collector is not affected."""
        self._faults.add(verb, self.resources.resolve(kind), error, after=after, times=times)

    # -- internals ---------------------------------------------------------------------------------------------

    def _require(self, key: Key) -> Obj:
        obj = self._lookup(key)
        if obj is None:
            raise NotFound(f'{key[0].kind} "{key[2]}" not found')
        return obj

    def _admitted(self, gk: GroupKind, new: Obj, old: Obj | None) -> Obj:
        hook = self._admit.get(gk)
        if hook is None:
            return new
        admitted = hook(new, old)
        admitted["metadata"] = dict(admitted.get("metadata") or {})
        return admitted

    def _replace(self, key: Key, old: Obj, new: Obj, actor: str) -> Obj:
        """The common tail of update and patch: server-owned fields, finalizer rule, admission, generation."""
        meta, old_meta = new["metadata"], old["metadata"]
        meta["namespace"] = key[1]
        keep_server_fields(meta, old_meta)
        check_no_new_finalizers(meta, old_meta)
        new = self._admitted(key[0], new, old)
        new["metadata"]["generation"] = next_generation(new, old)
        stored = self._write(key, old, new, actor)
        self._gc.run(GcBridge(self))
        return stored

    def _write(self, key: Key, old: Obj | None, new: Obj, actor: str, *, remove: bool = False) -> Obj:
        """Commit one write: resourceVersion, backing, indexes, collector, feed, watches, counter; return what is
        stored. ``new`` owns its metadata dict. An update equal to ``old`` writes nothing and returns ``old``.

        A terminating object left without finalizers and without a pending grace period is removed instead
        (the API server's rule: a pod still in its grace period waits for the kubelet's final delete).
        """
        gk, ns, name = key
        meta = new["metadata"]
        if (not remove and old is not None and meta.get("deletionTimestamp") is not None
                and not meta.get("finalizers") and not meta.get("deletionGracePeriodSeconds")):
            remove = True
        if not remove and old is not None and unchanged(old, new):
            return old
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        if self._backing is not None:
            # Kept first: a write the disk refused is not made in memory either (the verb fails, nothing changed).
            try:
                self._backing.commit(key, None if remove else new, self._counters())
            except Exception as err:
                self._rv -= 1
                raise InternalError(f"storage error: {err}") from err
        change: ChangeType
        if remove:
            self._index.remove(key, str(meta.get("uid")))
            change = "DELETED"
        else:
            change = "ADDED" if old is None else "MODIFIED"
            self._index.put(key, new)
        self._gc.observe(key, old, None if remove else new)
        record = Change(type=change, kind=gk.kind, group=gk.group, namespace=ns, name=name, obj=new, old=old,
                        actor=actor, at=self._clock())
        self._feed.append(record)
        self._hub.record(gk, self._rv, record)
        if gk not in _UNCOUNTED:
            self.writes[actor] += 1
        return new

    # -- persistence -------------------------------------------------------------------------------------------

    def _counters(self) -> dict[str, int]:
        return {"resourceVersion": self._rv, "uid": self._uid_seq, "name": self._name_seq}

    def _load(self, backing: Backing) -> None:
        """Rebuild the indexes from a backing's objects; history starts empty, so watches from before get Gone."""
        counters, stored = backing.load(self.resources)
        self._rv = counters.get("resourceVersion", 0)
        self._uid_seq = counters.get("uid", 0)
        self._name_seq = counters.get("name", 0)
        for key, obj in stored:
            self._index.put(key, obj)
            self._gc.observe(key, None, obj)
        self._hub = WatchHub(limit=self._hub.limit, floor=self._rv, max_pending=self._hub.max_pending)
        self._gc.run(GcBridge(self))


