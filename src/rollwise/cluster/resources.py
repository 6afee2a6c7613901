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
    "ANALYSIS_RUN",
    "ANALYSIS_TEMPLATE",
    "BUILTIN_RESOURCES",
    "CONTROLLER_REVISION",
    "EVENT",
    "EVENT_V1",
    "LEASE",
    "NODE",
    "POD",
    "PROJECT_GROUP",
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
    connect: tuple[str, ...] = ()
    """Subresources beyond status and scale that the server answers itself (a pod's ``log``, ``exec``, ...)."""
    verbs: tuple[str, ...] = ()
    """The verbs served; empty is every verb of a stored resource. A review (``SelfSubjectAccessReview``) is only
    created, never stored: its verbs are ``("create",)``."""

    @property
    def stored(self) -> bool:
        """Whether objects of this resource are kept (a review is answered and forgotten)."""
        return not self.verbs or "get" in self.verbs

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

_POD_CONNECT = ("log", "exec", "attach", "portforward")
_CREATE_ONLY = ("create",)
_ADM = "admissionregistration.k8s.io"
_RBAC = "rbac.authorization.k8s.io"
_AUTHZ = "authorization.k8s.io"

# Every kind a 1.37 kube-apiserver's discovery lists, at its preferred version, in discovery's order within a group
# (the core group first, then apps, as `kubectl get` resolves a bare kind). Left out: componentstatuses (deprecated,
# answers from the control plane's own health) and bindings (a scheduler's write, folded into pods here).
BUILTIN_RESOURCES: tuple[Resource, ...] = (
    _r("", "v1", "Namespace", "namespaces", short="ns", namespaced=False, status=True),
    _r("", "v1", "Node", "nodes", short="no", namespaced=False, status=True),
    _r("", "v1", "Pod", "pods", short="po", status=True, categories=_ALL, connect=_POD_CONNECT),
    _r("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", short="pvc", status=True),
    _r("", "v1", "PersistentVolume", "persistentvolumes", short="pv", namespaced=False, status=True),
    _r("", "v1", "Event", "events", short="ev"),
    _r("", "v1", "Service", "services", short="svc", status=True, categories=_ALL),
    _r("", "v1", "ConfigMap", "configmaps", short="cm"),
    _r("", "v1", "Secret", "secrets"),
    _r("", "v1", "ServiceAccount", "serviceaccounts", short="sa"),
    _r("", "v1", "Endpoints", "endpoints", short="ep"),
    _r("", "v1", "ReplicationController", "replicationcontrollers", short="rc", status=True, scale=True,
       categories=_ALL),
    _r("", "v1", "PodTemplate", "podtemplates"),
    _r("", "v1", "LimitRange", "limitranges", short="limits"),
    _r("", "v1", "ResourceQuota", "resourcequotas", short="quota", status=True),
    _r("apps", "v1", "StatefulSet", "statefulsets", short="sts", status=True, scale=True, categories=_ALL),
    _r("apps", "v1", "ControllerRevision", "controllerrevisions"),
    _r("apps", "v1", "Deployment", "deployments", short="deploy", status=True, scale=True, categories=_ALL),
    _r("apps", "v1", "ReplicaSet", "replicasets", short="rs", status=True, scale=True, categories=_ALL),
    _r("apps", "v1", "DaemonSet", "daemonsets", short="ds", status=True, categories=_ALL),
    _r("apps.rollwise.dev", "v1alpha1", "StatefulSet", "statefulsets", short="rsts", status=True, scale=True,
       categories=("all", "rollwise")),
    _r("apps.rollwise.dev", "v1alpha1", "AnalysisTemplate", "analysistemplates", short="at",
       categories=("rollwise",)),
    _r("apps.rollwise.dev", "v1alpha1", "AnalysisRun", "analysisruns", short="ar", status=True,
       categories=("rollwise",)),
    _r("batch", "v1", "Job", "jobs", status=True, categories=_ALL),
    _r("batch", "v1", "CronJob", "cronjobs", short="cj", status=True, categories=_ALL),
    _r("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", short="hpa", status=True,
       categories=_ALL),
    _r("coordination.k8s.io", "v1", "Lease", "leases"),
    _r("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices"),
    _r("events.k8s.io", "v1", "Event", "events", short="ev"),
    _r("networking.k8s.io", "v1", "Ingress", "ingresses", short="ing", status=True),
    _r("networking.k8s.io", "v1", "IngressClass", "ingressclasses", namespaced=False),
    _r("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", short="netpol"),
    _r("networking.k8s.io", "v1", "IPAddress", "ipaddresses", short="ip", namespaced=False),
    _r("networking.k8s.io", "v1", "ServiceCIDR", "servicecidrs", namespaced=False, status=True),
    _r("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", namespaced=False),
    _r("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", short="pdb", status=True),
    _r(_RBAC, "v1", "Role", "roles"),
    _r(_RBAC, "v1", "RoleBinding", "rolebindings"),
    _r(_RBAC, "v1", "ClusterRole", "clusterroles", namespaced=False),
    _r(_RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
    _r("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", short="pc", namespaced=False),
    _r("storage.k8s.io", "v1", "StorageClass", "storageclasses", short="sc", namespaced=False),
    _r("storage.k8s.io", "v1", "CSIDriver", "csidrivers", namespaced=False),
    _r("storage.k8s.io", "v1", "CSINode", "csinodes", namespaced=False),
    _r("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities"),
    _r("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", namespaced=False, status=True),
    _r("storage.k8s.io", "v1", "VolumeAttributesClass", "volumeattributesclasses", short="vac", namespaced=False),
    _r("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", short="csr",
       namespaced=False, status=True),
    _r(_ADM, "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", namespaced=False,
       categories=("api-extensions",)),
    _r(_ADM, "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", namespaced=False,
       categories=("api-extensions",)),
    _r(_ADM, "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", namespaced=False, status=True,
       categories=("api-extensions",)),
    _r(_ADM, "v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", namespaced=False,
       categories=("api-extensions",)),
    _r("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", short="crd,crds",
       namespaced=False, status=True, categories=("api-extensions",)),
    _r("apiregistration.k8s.io", "v1", "APIService", "apiservices", namespaced=False, status=True,
       categories=("api-extensions",)),
    _r("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", namespaced=False, status=True),
    _r("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration", "prioritylevelconfigurations",
       namespaced=False, status=True),
    # Reviews: created and answered, never stored (apiserver/auth/reviews.py answers them).
    _r("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", namespaced=False,
       verbs=_CREATE_ONLY),
    _r("authentication.k8s.io", "v1", "TokenReview", "tokenreviews", namespaced=False, verbs=_CREATE_ONLY),
    _r(_AUTHZ, "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", namespaced=False, verbs=_CREATE_ONLY),
    _r(_AUTHZ, "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", namespaced=False, verbs=_CREATE_ONLY),
    _r(_AUTHZ, "v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False, verbs=_CREATE_ONLY),
    _r(_AUTHZ, "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", verbs=_CREATE_ONLY),
)

POD = GroupKind("", "Pod")
NODE = GroupKind("", "Node")
PVC = GroupKind("", "PersistentVolumeClaim")
EVENT_V1 = GroupKind("", "Event")
EVENT = GroupKind("events.k8s.io", "Event")
LEASE = GroupKind("coordination.k8s.io", "Lease")
STATEFULSET = GroupKind("apps", "StatefulSet")
ROLLWISE_STATEFULSET = GroupKind("apps.rollwise.dev", "StatefulSet")
CONTROLLER_REVISION = GroupKind("apps", "ControllerRevision")
ANALYSIS_TEMPLATE = GroupKind("apps.rollwise.dev", "AnalysisTemplate")
ANALYSIS_RUN = GroupKind("apps.rollwise.dev", "AnalysisRun")
PROJECT_GROUP = "apps.rollwise.dev"
"""The project's own group: its kinds are served by their CRDs (cluster/crd/statefulset.py, cluster/crd/analysis.py)."""
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
