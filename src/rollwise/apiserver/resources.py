"""The resources the server knows: one table that drives routing, discovery, subresources and printers.

Each resource names its group, version, kind and plural the way the API does, and the *store kind* under which the
memory store keeps it. The store keys objects by kind alone, so a kind served under two groups (``apps/v1`` and
``apps.rollwise.dev/v1alpha1`` StatefulSet) gets a qualified store kind for every group but the built-in one.
Custom resources join the table at run time, when their CustomResourceDefinition is created.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ALL_VERBS", "BUILTINS", "Registry", "Resource", "crd_resources"]

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_SUB_VERBS = ("get", "patch", "update")


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status: bool = False
    scale: bool = False
    log: bool = False
    store_kind: str = ""
    printer_columns: tuple[Mapping[str, Any], ...] = ()
    schema: Mapping[str, Any] | None = field(default=None, compare=False)
    scale_paths: tuple[str, str, str] = (".spec.replicas", ".status.replicas", ".status.labelSelector")

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        return self.group_version

    @property
    def key(self) -> str:
        """The kind the store keys this resource's objects by."""
        return self.store_kind or self.kind

    @property
    def custom(self) -> bool:
        return self.schema is not None or bool(self.printer_columns)

    @property
    def group_resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _r(group: str, version: str, kind: str, plural: str, **kw: Any) -> Resource:
    return Resource(group=group, version=version, kind=kind, plural=plural, singular=kind.lower(), **kw)


BUILTINS: tuple[Resource, ...] = (
    _r("", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",), status=True),
    _r("", "v1", "Pod", "pods", short_names=("po",), categories=("all",), status=True, log=True),
    _r("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", short_names=("pvc",), status=True),
    _r("", "v1", "Event", "events", short_names=("ev",)),
    _r("", "v1", "Service", "services", short_names=("svc",), categories=("all",), status=True),
    _r("", "v1", "ConfigMap", "configmaps", short_names=("cm",)),
    _r("", "v1", "Secret", "secrets"),
    _r("", "v1", "ServiceAccount", "serviceaccounts", short_names=("sa",)),
    _r("", "v1", "Node", "nodes", namespaced=False, short_names=("no",), status=True),
    _r("apps", "v1", "StatefulSet", "statefulsets", short_names=("sts",), categories=("all",), status=True,
       scale=True),
    _r("apps", "v1", "ControllerRevision", "controllerrevisions"),
    _r("apps", "v1", "Deployment", "deployments", short_names=("deploy",), categories=("all",), status=True,
       scale=True, store_kind="Deployment.apps"),
    _r("coordination.k8s.io", "v1", "Lease", "leases"),
    _r("events.k8s.io", "v1", "Event", "events", short_names=("ev",), store_kind="Event.events.k8s.io"),
    _r("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", short_names=("pdb",), status=True),
    _r("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    _r("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
    _r("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False),
    _r("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
    _r("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", namespaced=False,
       short_names=("crd", "crds"), status=True),
)


def crd_resources(crd: Mapping[str, Any]) -> list[Resource]:
    """The served versions of a CustomResourceDefinition, as table rows."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = str(spec.get("group", ""))
    kind = str(names.get("kind", ""))
    out = []
    for v in spec.get("versions") or ():
        if not v.get("served", True):
            continue
        sub = v.get("subresources") or {}
        scale = sub.get("scale")
        paths = (".spec.replicas", ".status.replicas", ".status.labelSelector")
        if isinstance(scale, Mapping):
            paths = (str(scale.get("specReplicasPath", paths[0])), str(scale.get("statusReplicasPath", paths[1])),
                     str(scale.get("labelSelectorPath", paths[2])))
        out.append(Resource(
            group=group, version=str(v.get("name", "")), kind=kind, plural=str(names.get("plural", "")),
            singular=str(names.get("singular") or kind.lower()), namespaced=spec.get("scope") != "Cluster",
            short_names=tuple(names.get("shortNames") or ()), categories=tuple(names.get("categories") or ()),
            status="status" in sub, scale=scale is not None, store_kind=f"{kind}.{group}",
            printer_columns=tuple(v.get("additionalPrinterColumns") or ()),
            schema=(v.get("schema") or {}).get("openAPIV3Schema") or {}, scale_paths=paths))
    return out


class Registry:
    """The live table: built-ins plus the resources of every established CRD."""

    def __init__(self) -> None:
        self._builtin = list(BUILTINS)
        self._custom: dict[str, list[Resource]] = {}  # CRD name -> its resources

    def add_crd(self, crd: Mapping[str, Any]) -> None:
        self._custom[str((crd.get("metadata") or {}).get("name", ""))] = crd_resources(crd)

    def remove_crd(self, name: str) -> list[Resource]:
        return self._custom.pop(name, [])

    def __iter__(self) -> Iterator[Resource]:
        yield from self._builtin
        for rs in self._custom.values():
            yield from rs

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        for r in self:
            if r.group == group and r.version == version and r.plural == plural:
                return r
        return None

    def by_kind(self, api_version: str, kind: str) -> Resource | None:
        for r in self:
            if r.api_version == api_version and r.kind == kind:
                return r
        return None

    def by_store_kind(self, store_kind: str) -> Resource | None:
        for r in self:
            if r.key == store_kind:
                return r
        return None

    def group_versions(self) -> dict[str, list[str]]:
        """Group name -> its versions, in table order (the core group is "")."""
        out: dict[str, list[str]] = {}
        for r in self:
            versions = out.setdefault(r.group, [])
            if r.version not in versions:
                versions.append(r.version)
        return out
