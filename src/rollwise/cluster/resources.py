"""The resource table: which API resources the world knows, keyed as the API server keys them.

An object is addressed by its group and version-independent kind (``GroupKind``) plus namespace and name, so an
``apps/v1`` StatefulSet and an ``apps.rollwise.dev/v1alpha1`` StatefulSet of the same name are two objects.
Each ``Resource`` row says what discovery, the REST paths, the printers and the store need: versions, plural,
singular, short names, scope, the status and scale subresources and categories.

Call sites stay short: a bare kind (``"Pod"``, ``"StatefulSet"``) names the first resource of that kind in the
table (core before ``apps`` before the project's group, as ``kubectl get statefulset`` prefers the built-in), and
``"StatefulSet.apps.rollwise.dev"`` names a group explicitly, as kubectl's ``kind.group`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "BUILTIN_RESOURCES",
    "CONTROLLER_REVISION",
    "EVENT",
    "EVENT_V1",
    "LEASE",
    "POD",
    "PVC",
    "ROLLWISE_PRINTER_COLUMNS",
    "ROLLWISE_STATEFULSET",
    "STATEFULSET",
    "STATEFULSET_KINDS",
    "GroupKind",
    "Resource",
    "ResourceRef",
    "ResourceTable",
    "group_of",
    "ref_of",
]


class GroupKind(NamedTuple):
    """A group and a version-independent kind: the identity of a resource. The core group is ``""``.

    A tuple, so the store's hot paths hash and compare it at C speed."""

    group: str
    kind: str

    def __str__(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind


ResourceRef = GroupKind | str
"""A ``GroupKind``, a bare kind (``"Pod"``) or ``"Kind.group"``."""


def group_of(api_version: str) -> str:
    """The group of an ``apiVersion`` (``"apps/v1"`` -> ``"apps"``, ``"v1"`` -> ``""``)."""
    return api_version.rpartition("/")[0]


def ref_of(obj: Mapping[str, Any]) -> ResourceRef:
    """How to name an object's resource to a store: its ``GroupKind``, or the bare kind for the core group (which
    the store's table resolves, leniently, for objects written with ``apiVersion: v1``)."""
    kind = str(obj.get("kind") or "")
    group = group_of(str(obj.get("apiVersion") or ""))
    return GroupKind(group, kind) if group else kind


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    """One row of the table: what the API serves for a group and kind."""

    group: str
    versions: tuple[str, ...]
    """Served versions, the storage (preferred) version first."""
    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...] = ()
    namespaced: bool = True
    status: bool = False
    """Has a ``/status`` subresource: the main endpoint keeps the stored status, ``/status`` changes only it."""
    scale: bool = False
    """Has a ``/scale`` subresource over ``spec.replicas``."""
    categories: tuple[str, ...] = ()
    list_kind: str = ""

    @property
    def group_kind(self) -> GroupKind:
        return GroupKind(self.group, self.kind)

    @property
    def version(self) -> str:
        """The preferred (storage) version."""
        return self.versions[0]

    @property
    def api_version(self) -> str:
        """The preferred ``apiVersion`` string (``v1``, ``apps/v1``)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def api_versions(self) -> tuple[str, ...]:
        return tuple(f"{self.group}/{v}" if self.group else v for v in self.versions)


def _r(group: str, versions: str, kind: str, plural: str, *, short: str = "", **extra: Any) -> Resource:
    return Resource(group=group, versions=tuple(versions.split(",")), kind=kind, plural=plural,
                    singular=kind.lower(), short_names=tuple(short.split(",")) if short else (),
                    list_kind=f"{kind}List", **extra)


_ALL = ("all",)

BUILTIN_RESOURCES: tuple[Resource, ...] = (
    _r("", "v1", "Namespace", "namespaces", short="ns", namespaced=False, status=True),
    _r("", "v1", "Node", "nodes", short="no", namespaced=False, status=True),
    _r("", "v1", "Pod", "pods", short="po", status=True, categories=_ALL),
    _r("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", short="pvc", status=True),
    _r("", "v1", "PersistentVolume", "persistentvolumes", short="pv", namespaced=False, status=True),
    _r("", "v1", "Event", "events", short="ev"),
    _r("", "v1", "Service", "services", short="svc", status=True, categories=_ALL),
    _r("", "v1", "ConfigMap", "configmaps", short="cm"),
    _r("", "v1", "Secret", "secrets"),
    _r("", "v1", "ServiceAccount", "serviceaccounts", short="sa"),
    _r("", "v1", "Endpoints", "endpoints", short="ep"),
    _r("apps", "v1", "StatefulSet", "statefulsets", short="sts", status=True, scale=True, categories=_ALL),
    _r("apps", "v1", "ControllerRevision", "controllerrevisions"),
    _r("apps", "v1", "Deployment", "deployments", short="deploy", status=True, scale=True, categories=_ALL),
    _r("apps", "v1", "ReplicaSet", "replicasets", short="rs", status=True, scale=True, categories=_ALL),
    _r("apps", "v1", "DaemonSet", "daemonsets", short="ds", status=True, categories=_ALL),
    _r("apps.rollwise.dev", "v1alpha1", "StatefulSet", "statefulsets", short="rsts", status=True, scale=True,
       categories=("all", "rollwise")),
    _r("coordination.k8s.io", "v1", "Lease", "leases"),
    _r("events.k8s.io", "v1", "Event", "events", short="ev"),
    _r("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", short="pdb", status=True),
    _r("rbac.authorization.k8s.io", "v1", "Role", "roles"),
    _r("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
    _r("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False),
    _r("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
    _r("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", short="crd,crds",
       namespaced=False, status=True),
    _r("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies",
       namespaced=False, status=True),
    _r("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding",
       "validatingadmissionpolicybindings", namespaced=False),
)

POD = GroupKind("", "Pod")
PVC = GroupKind("", "PersistentVolumeClaim")
EVENT_V1 = GroupKind("", "Event")
EVENT = GroupKind("events.k8s.io", "Event")
LEASE = GroupKind("coordination.k8s.io", "Lease")
STATEFULSET = GroupKind("apps", "StatefulSet")
ROLLWISE_STATEFULSET = GroupKind("apps.rollwise.dev", "StatefulSet")
CONTROLLER_REVISION = GroupKind("apps", "ControllerRevision")
STATEFULSET_KINDS = (STATEFULSET, ROLLWISE_STATEFULSET)
"""The resources rollwise's StatefulSet controller runs: the built-in kind and the project's CRD."""

ROLLWISE_PRINTER_COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Desired", "type": "integer", "jsonPath": ".spec.replicas"},
    {"name": "Current", "type": "integer", "jsonPath": ".status.replicas"},
    {"name": "Updated", "type": "integer", "jsonPath": ".status.updatedReplicas"},
    {"name": "Ready", "type": "integer", "jsonPath": ".status.readyReplicas"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    {"name": "Strategy", "type": "string", "jsonPath": ".spec.updateStrategy.type", "priority": 1},
    {"name": "Containers", "type": "string", "jsonPath": ".spec.template.spec.containers[*].name", "priority": 1},
    {"name": "Images", "type": "string", "jsonPath": ".spec.template.spec.containers[*].image", "priority": 1},
)
"""The custom kind's columns in `kubectl get rsts` (operator-plan.md §2), served by `up` and written into the CRD."""


@dataclass(slots=True)
class ResourceTable:
    """The resources one world serves: the built-in rows plus any registered later (a CRD once established).

    Unknown kinds are still storable (generic, namespaced, no subresources): ``get`` answers a default row.
    """

    _rows: dict[GroupKind, Resource] = field(default_factory=dict)
    _by_kind: dict[str, GroupKind] = field(default_factory=dict)
    _scoped: dict[ResourceRef, tuple[GroupKind, bool]] = field(default_factory=dict)  # resolve() + namespaced
    _of: dict[tuple[str, str], GroupKind] = field(default_factory=dict)  # (apiVersion, kind) -> of()

    @classmethod
    def builtin(cls) -> ResourceTable:
        table = cls()
        for row in BUILTIN_RESOURCES:
            table.register(row)
        return table

    def register(self, row: Resource) -> None:
        """Add (or replace) a row; a bare kind keeps naming the first row registered with it."""
        gk = row.group_kind
        self._rows[gk] = row
        self._by_kind.setdefault(row.kind, gk)
        self._scoped.clear()
        self._of.clear()

    def unregister(self, gk: GroupKind) -> None:
        self._rows.pop(gk, None)
        self._scoped.clear()
        self._of.clear()
        if self._by_kind.get(gk.kind) == gk:
            del self._by_kind[gk.kind]
            for other in self._rows:
                if other.kind == gk.kind:
                    self._by_kind[gk.kind] = other
                    break

    def __iter__(self) -> Iterator[Resource]:
        return iter(list(self._rows.values()))

    def __contains__(self, gk: object) -> bool:
        return gk in self._rows

    def known(self, gk: GroupKind) -> Resource | None:
        """The row for ``gk``, or None if the table does not list it."""
        return self._rows.get(gk)

    def get(self, gk: GroupKind) -> Resource:
        """The row for ``gk``; a generic namespaced row for a kind the table does not list."""
        row = self._rows.get(gk)
        if row is not None:
            return row
        return Resource(group=gk.group, versions=("v1",), kind=gk.kind, plural=f"{gk.kind.lower()}s",
                        singular=gk.kind.lower(), list_kind=f"{gk.kind}List")

    def resolve(self, ref: ResourceRef) -> GroupKind:
        """A ``GroupKind`` for a reference: itself, ``"Kind.group"``, or a bare kind (the first row of that kind;
        a kind the table does not know is taken to be in the core group)."""
        if isinstance(ref, GroupKind):
            return ref
        kind, dot, group = ref.partition(".")
        if dot:
            return GroupKind(group, kind)
        return self._by_kind.get(ref) or GroupKind("", ref)

    def scoped(self, ref: ResourceRef) -> tuple[GroupKind, bool]:
        """``resolve(ref)`` and whether that resource is namespaced, memoised (the store asks on every call)."""
        found = self._scoped.get(ref)
        if found is None:
            gk = self.resolve(ref)
            found = self._scoped[ref] = (gk, self.get(gk).namespaced)
        return found

    def of(self, obj: Mapping[str, Any]) -> GroupKind:
        """The ``GroupKind`` of an object, from its ``apiVersion`` and ``kind``.

        Lenient where the store is handed objects written by hand: an ``apiVersion`` of ``v1`` (or none) for a
        kind the core group does not serve names that kind's first row. The API server checks a body against
        its URL before it reaches the store, so this leniency never reaches the wire.
        """
        pair = (str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
        found = self._of.get(pair)
        if found is None:
            gk = GroupKind(group_of(pair[0]), pair[1])
            if not gk.group and gk not in self._rows:
                gk = self._by_kind.get(gk.kind, gk)
            found = self._of[pair] = gk
        return found

    def by_plural(self, group: str, plural: str) -> Resource | None:
        """The row a REST path names (``/apis/<group>/<version>/<plural>``), or None."""
        for row in self._rows.values():
            if row.group == group and row.plural == plural:
                return row
        return None

    def by_name(self, name: str) -> list[Resource]:
        """Rows a kubectl-style name matches: plural, singular, short name or kind, optionally ``.group``."""
        lowered = name.lower()
        out = []
        for row in self._rows.values():
            names = {row.plural, row.singular, row.kind.lower(), *row.short_names}
            if lowered in names or any(lowered == f"{n}.{row.group}" for n in names if row.group):
                out.append(row)
        return out

    def all(self) -> Iterable[Resource]:
        return list(self._rows.values())
