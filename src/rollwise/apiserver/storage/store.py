"""The API semantics over the memory store: the verbs the HTTP handlers call, in store form (float times).

The memory store already gives resources by group and kind, resourceVersions, optimistic concurrency,
generation, the status split, graceful pod deletion, finalizers, owner-reference garbage collection, watches and
persistence. This layer adds what only a server has: namespaces as objects that must exist and whose deletion
empties them, CRDs that register their resources at once, the four patch types, the scale subresource, dry
runs, and DeleteOptions preconditions.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rollwise.api.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    FieldError,
    Forbidden,
    Invalid,
    NotFound,
    UnsupportedMediaType,
)
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, name_of
from rollwise.api.pod_status import pod_status_errors
from rollwise.api.validation_objects import check_object_references
from rollwise.api.values import clone
from rollwise.apiserver.admission.chain import CRD, NAMESPACE, Admission
from rollwise.apiserver.admission.names import check_name
from rollwise.apiserver.admission.schema import admit_custom
from rollwise.apiserver.admission.versioning import Versioning
from rollwise.apiserver.admission.write_policies import policy_warnings, wire_kind
from rollwise.apiserver.kinds import event_shapes
from rollwise.apiserver.kinds.resources import Registry, Resource
from rollwise.apiserver.kinds.scale import scale_of
from rollwise.apiserver.storage.bootstrap import (
    PROTECTED_NAMESPACES,
    default_service_account,
    install_rollwise_crd,
    seed_cluster,
)
from rollwise.apiserver.storage.fieldsets import ListTypes
from rollwise.apiserver.storage.ownership import apply, record_write
from rollwise.apiserver.storage.patch_apply import patched
from rollwise.cluster.protocol import Propagation
from rollwise.cluster.resources import POD, GroupKind
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.cluster.store.persistence import uuid_uids
from rollwise.cluster.store.pump import FeedPump
from rollwise.cluster.wire import format_time

__all__ = ["PATCH_TYPES", "ApiStore", "Forbidden", "UnsupportedMediaType"]

PATCH_TYPES = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+json": "apply",
}


class ApiStore:
    def __init__(self, *, gates: FeatureGates | None = None, clock: Callable[[], float] = time.time,
                 history: int = 10_000, data_dir: Path | None = None, versioning: Versioning | None = None) -> None:
        """``data_dir``: keep the objects in SQLite there (``MemoryCluster.open``); None keeps them in memory.
        ``versioning``: the release and proposals apps/v1 StatefulSets are judged by (default: 1.37, proposals
        on); its gates unless ``gates`` are given."""
        self.versioning = versioning or Versioning.default()
        self.gates = gates or self.versioning.gates()
        self.clock = clock
        self.registry = Registry()
        self.warnings: list[str] = []
        """Warnings of the last write (``Warn`` policy bindings), for the HTTP layer to send and clear."""
        self.admission = Admission(gates=self.gates, versioning=self.versioning)
        options: dict[str, Any] = {"clock": clock, "admit": self.admission.hooks(), "history_limit": history}
        if data_dir is None:
            self.cluster = MemoryCluster(uid=uuid_uids, **options)
        else:
            self.cluster = MemoryCluster.open(data_dir, **options)
        self.admission.world.bind(self.cluster)  # a claim's expansion reads its StorageClass
        self.admission.plugins.bind(self.cluster, clock)  # Priority, DefaultStorageClass, the scheduler read the store
        for r in self.registry:
            if r.key not in self.cluster.resources:
                self.cluster.resources.register(r.row)
        install_rollwise_crd(self.cluster)
        for crd in self.cluster.list(CRD):
            self.registry.register_in(self.cluster.resources, crd)
        self.feed = FeedPump(self.cluster)
        seed_cluster(self.cluster, now=clock())
        self.feed.pump()

    def _policies(self, resource: Resource, operation: str, obj: Obj | None, old: Obj | None, *, actor: str,
                  sub: str = "") -> None:
        """The ValidatingAdmissionPolicies bound to this write (``write_policies.py``): raises a denial; keeps the
        warnings of ``Warn`` bindings in ``self.warnings`` for the reply."""
        self.warnings += policy_warnings(self.cluster, resource, operation, obj, old, actor=actor, sub=sub)

    def _exists(self, gk: GroupKind, namespace: str, name: str) -> bool:
        try:
            self.cluster.get(gk, namespace, name)
        except NotFound:
            return False
        return True

    def close(self) -> None:
        self.cluster.drop_watches()
        self.cluster.close()

    @property
    def resource_version(self) -> int:
        return self.cluster.resource_version

    # -- helpers ---------------------------------------------------------------------------------------------

    @staticmethod
    def _ns(resource: Resource, namespace: str | None) -> str:
        return namespace or "default" if resource.namespaced else ""

    def _check_namespace(self, resource: Resource, namespace: str) -> None:
        if not resource.namespaced:
            return
        try:
            ns = self.cluster.get(NAMESPACE, "", namespace)
        except NotFound:
            raise NotFound(f'namespaces "{namespace}" not found') from None
        if ns["metadata"].get("deletionTimestamp") is not None:
            raise Forbidden(
                f'unable to create new content in namespace {namespace} because it is being terminated')

    def _not_found(self, resource: Resource, name: str) -> NotFound:
        return NotFound(f'{resource.group_resource} "{name}" not found')

    def get(self, resource: Resource, namespace: str | None, name: str) -> Obj:
        try:
            return self.cluster.get(resource.key, self._ns(resource, namespace), name)
        except NotFound:
            raise self._not_found(resource, name) from None

    def replaced(self, resource: Resource, namespace: str | None, name: str) -> Obj | None:
        """The custom resource an update of ``name`` would replace, or None (another kind, or none stored)."""
        if not resource.schema:
            return None
        try:
            return self.get(resource, namespace, name)
        except NotFound:
            return None

    def list(self, resource: Resource, namespace: str | None, *, label_selector: str | None = None,
             field_selector: str | None = None) -> list[Obj]:
        """Objects of a resource in a namespace (None: all); BadRequest for a malformed or unsupported selector."""
        ns = namespace if resource.namespaced else None
        if resource.stored_as is not None:
            field_selector = event_shapes.selector_to_stored(field_selector)
        return self.cluster.list(resource.key, ns, label_selector=label_selector, field_selector=field_selector)

    def _typed(self, resource: Resource, body: Any, old: Obj | None = None) -> Obj:
        """The body as an object of ``resource``: kind and apiVersion from the URL, owner references checked, and
        for a custom resource its CRD's schema and rules applied (``schema.admit_custom``, ``old`` on an update)."""
        if not isinstance(body, Mapping):
            raise BadRequest(f"the request body must be a {resource.kind} object")
        if not isinstance(body.get("metadata") or {}, Mapping):
            raise BadRequest("metadata: must be an object")
        obj = dict(body)
        if obj.get("kind") not in (None, "", resource.kind) or obj.get("apiVersion") not in (
                None, "", resource.api_version):
            raise BadRequest(f"the API version in the data ({obj.get('apiVersion')}) does not match the expected "
                             f"API version ({resource.api_version})")
        obj["kind"] = resource.kind
        obj["apiVersion"] = resource.api_version
        # The garbage collector and the indexes read these on every object, whatever its kind.
        errors = check_object_references(obj.get("metadata") or {})
        if errors:
            raise Invalid(f'{resource.kind}.{resource.group} "{(obj.get("metadata") or {}).get("name", "")}" '
                          "is invalid: " + ", ".join(map(str, errors)), errors=errors)
        if resource.schema:
            obj, errors = admit_custom(obj, None if old is None else self.wire_kind(resource, old), resource.schema)
            if errors:
                raise Invalid(f'{resource.kind}.{resource.group} "{(obj.get("metadata") or {}).get("name", "")}" '
                              "is invalid: " + ", ".join(map(str, errors)), errors=errors)
        return event_shapes.to_stored(obj) if resource.stored_as is not None else obj

    wire_kind = staticmethod(wire_kind)

    # -- writes ----------------------------------------------------------------------------------------------

    def _owned(self, resource: Resource, old: Obj | None, new: Obj, manager: str | None, subresource: str) -> None:
        """Record ``manager``'s write in ``new``'s managedFields (ownership.py); None: an internal write."""
        if manager is not None:
            record_write(old, new, manager=manager, types=ListTypes(resource.schema),
                         api_version=resource.api_version, now=format_time(self.clock()), subresource=subresource)
        elif old is not None and "managedFields" in old["metadata"]:
            new["metadata"]["managedFields"] = old["metadata"]["managedFields"]

    def create(self, resource: Resource, namespace: str | None, body: Mapping[str, Any], *, actor: str,
               dry_run: bool = False, manager: str | None = None, applied: bool = False) -> Obj:
        ns = self._ns(resource, namespace)
        obj = self._typed(resource, body)
        if not applied:
            obj["metadata"] = dict(obj.get("metadata") or {})
            obj["metadata"].pop("managedFields", None)
            self._owned(resource, None, obj, manager, "")
        meta = obj["metadata"] = dict(obj.get("metadata") or {})
        if resource.namespaced and meta.get("namespace") not in (None, "", ns):
            raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
        if resource.namespaced:
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        self._check_namespace(resource, ns)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
        check_name(resource.group, resource.kind, meta.get("name"))
        if resource.status and resource.kind not in ("Pod",):
            obj.pop("status", None)
        self._policies(resource, "CREATE", obj, None, actor=actor)
        if dry_run:
            return self._dry_create(resource, obj)
        try:
            created = self.cluster.create(obj, actor=actor)
        except AlreadyExists:
            raise AlreadyExists(f'{resource.group_resource} "{meta.get("name")}" already exists') from None
        self._after_write(resource, created)
        return created

    def _dry_create(self, resource: Resource, obj: Obj) -> Obj:
        if self._exists(resource.key, obj["metadata"].get("namespace", ""), name_of(obj)):
            raise AlreadyExists(f'{resource.group_resource} "{name_of(obj)}" already exists')
        hook = self.admission.hooks().get(resource.key)
        out = hook(clone(obj), None) if hook else clone(obj)
        out["metadata"].update(uid=str(uuid.uuid4()), creationTimestamp=self.clock(), generation=1)
        return out

    def _after_write(self, resource: Resource, obj: Obj | None) -> None:
        if resource.key == CRD and obj is not None:
            self.registry.register_in(self.cluster.resources, obj)
        if resource.key == NAMESPACE and obj is not None and obj["metadata"].get("deletionTimestamp") is None:
            default_service_account(self.cluster, name_of(obj))
        self.feed.pump()

    def update(self, resource: Resource, namespace: str | None, name: str, body: Mapping[str, Any], *,
               actor: str, subresource: str = "", dry_run: bool = False, manager: str | None = None) -> Obj:
        old = self.get(resource, namespace, name)
        obj = self._typed(resource, body, old)
        meta = obj["metadata"] = dict(obj.get("metadata") or {})
        if meta.get("name") not in (None, name):
            raise BadRequest(f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                             f"({name})")
        meta["name"] = name
        if resource.namespaced:
            meta["namespace"] = old["metadata"]["namespace"]
        meta.pop("managedFields", None)
        self._owned(resource, old, obj, manager, subresource)
        return self._write(resource, old, obj, actor=actor, subresource=subresource, dry_run=dry_run)

    def _write(self, resource: Resource, old: Obj, new: Obj, *, actor: str, subresource: str,
               dry_run: bool) -> Obj:
        rv = new["metadata"].get("resourceVersion")
        if rv not in (None, "") and str(rv) != old["metadata"]["resourceVersion"]:
            raise Conflict(f'Operation cannot be fulfilled on {resource.group_resource} "{name_of(old)}": the object '
                           "has been modified; please apply your changes to the latest version and try again")
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        self._policies(resource, "UPDATE", new, old, actor=actor, sub=subresource)
        if subresource == "status":
            if resource.key == POD:  # the store's admission does not run on status writes (api/pod_status.py)
                errors = pod_status_errors(new)
                if errors:
                    raise Invalid(f'Pod "{name_of(old)}" is invalid: ' + "; ".join(map(str, errors)), errors=errors)
            if dry_run:
                return {**old, "status": new.get("status")}
            out = self.cluster.update_status({**old, "status": new.get("status")}, actor=actor)
        else:
            if resource.status:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            if dry_run:
                hook = self.admission.hooks().get(resource.key)
                out = hook(clone(new), old) if hook else clone(new)
                for f in ("uid", "creationTimestamp", "generation", "resourceVersion"):
                    if f in old["metadata"]:
                        out["metadata"][f] = old["metadata"][f]
                return out
            out = self.cluster.update(new, actor=actor)
        self._after_write(resource, out)
        return out

    def patch(self, resource: Resource, namespace: str | None, name: str, patch_type: str, patch: Any, *,
              actor: str, subresource: str = "", dry_run: bool = False, manager: str | None = None,
              force: bool = False) -> tuple[Obj, bool]:
        """The patched object and whether it was created (server-side apply of a missing object)."""
        kind = PATCH_TYPES.get(patch_type)
        if kind is None:
            raise UnsupportedMediaType(f"the body of the request was in an unknown format - accepted media types "
                                       f"include: {', '.join(PATCH_TYPES)}")
        try:
            old = self.get(resource, namespace, name)
        except NotFound:
            if kind != "apply" or subresource:
                raise
            if not isinstance(patch, Mapping):
                raise BadRequest("an apply patch must be an object") from None
            body = {**patch, "metadata": {**(patch.get("metadata") or {}), "name": name}}
            if manager is not None:
                body = apply(None, body, manager=manager, force=force, types=ListTypes(resource.schema),
                             api_version=resource.api_version, now=format_time(self.clock()))
            return self.create(resource, namespace, body, actor=actor, dry_run=dry_run, applied=True), True
        if kind == "strategic" and resource.custom:
            raise UnsupportedMediaType("strategic merge patch is not supported for custom resources; use a merge "
                                       "patch (--type merge) or a JSON patch (--type json)")
        new = patched(resource, clone(self.wire_kind(resource, old)), kind, patch, manager=manager, force=force,
                      now=format_time(self.clock()), subresource=subresource)
        if name_of(new) != name:
            raise Invalid(errors=[FieldError(path="metadata.name", value=name_of(new),
                                             rule="field is immutable")])
        if resource.namespaced:
            new["metadata"]["namespace"] = old["metadata"]["namespace"]
        new = self._typed(resource, new, old)
        if kind != "apply":
            new["metadata"].pop("managedFields", None)
            self._owned(resource, old, new, manager, subresource)
        return self._write(resource, old, new, actor=actor, subresource=subresource, dry_run=dry_run), False

    def delete(self, resource: Resource, namespace: str | None, name: str, options: Mapping[str, Any], *,
               actor: str, dry_run: bool = False) -> tuple[Obj, bool]:
        """(the object, whether it is gone). The object is the last state when it is gone."""
        old = self.get(resource, namespace, name)
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != old["metadata"].get("uid"):
            raise Conflict(f'Precondition failed: UID in precondition: {pre["uid"]}, UID in object meta: '
                           f'{old["metadata"].get("uid")}')
        if pre.get("resourceVersion") and str(pre["resourceVersion"]) != old["metadata"]["resourceVersion"]:
            raise Conflict(f'Precondition failed: ResourceVersion in precondition: {pre["resourceVersion"]}, '
                           f'ResourceVersion in object meta: {old["metadata"]["resourceVersion"]}')
        propagation: Propagation = options.get("propagationPolicy") or "Background"
        if options.get("orphanDependents") is True:
            propagation = "Orphan"
        grace = options.get("gracePeriodSeconds")
        self._policies(resource, "DELETE", None, old, actor=actor)
        if dry_run:
            return old, False
        ns = old["metadata"].get("namespace", "")
        if resource.key == NAMESPACE:
            if name in PROTECTED_NAMESPACES:
                raise Forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
            self._empty_namespace(name, actor=actor)
        if resource.key == CRD:
            for r in self.registry.remove_crd(name):
                for obj in self.cluster.list(r.key):
                    self.cluster.delete(r.key, obj["metadata"].get("namespace", ""), name_of(obj),
                                        grace_period_seconds=0, actor=actor)
        remains = self.cluster.delete(resource.key, ns, name, actor=actor, propagation=propagation,
                                      grace_period_seconds=None if grace is None else float(grace))
        self.feed.pump()
        return (remains, False) if remains is not None else (old, True)

    def _empty_namespace(self, namespace: str, *, actor: str) -> None:
        for r in list(self.registry):
            if not r.namespaced:
                continue
            for obj in self.cluster.list(r.key, namespace):
                try:
                    self.cluster.delete(r.key, namespace, name_of(obj), grace_period_seconds=0, actor=actor)
                except NotFound:
                    continue

    # -- scale -----------------------------------------------------------------------------------------------

    def scale_of(self, resource: Resource, obj: Obj) -> Obj:
        return scale_of(resource, obj)

    def update_scale(self, resource: Resource, namespace: str | None, name: str, scale: Mapping[str, Any], *,
                     actor: str, dry_run: bool = False) -> Obj:
        old = self.get(resource, namespace, name)
        replicas = (scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise Invalid(errors=[FieldError(path="spec.replicas", value=replicas,
                                             rule="must be greater than or equal to 0")])
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        new = clone(self.wire_kind(resource, old))
        if rv:
            new["metadata"]["resourceVersion"] = rv
        target = new
        parts = resource.scale_paths[0].lstrip(".").split(".")
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = replicas
        out = self._write(resource, old, self._typed(resource, new, old), actor=actor, subresource="", dry_run=dry_run)
        return self.scale_of(resource, out)
