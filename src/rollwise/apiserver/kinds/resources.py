"""The resources the server serves: the world's resource table (``rollwise.cluster.resources``) seen as REST.

Each row of the world's table becomes one served version here, with what only the server needs on top: the
``log`` subresource, a CRD's printer columns, schema and scale paths. Custom resources join both tables at run
time, when their CustomResourceDefinition is created, so the store keys and scopes them as the API does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.cluster.resources import (
    BUILTIN_RESOURCES,
    EVENT,
    EVENT_V1,
    PROJECT_GROUP,
    ROLLWISE_PRINTER_COLUMNS,
    ROLLWISE_STATEFULSET,
    GroupKind,
    ResourceTable,
)
from rollwise.cluster.resources import Resource as WorldResource

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
    connect: tuple[str, ...] = ()
    """Subresources the server answers itself: a pod's ``log``, ``exec``, ``attach``, ``portforward``."""
    verbs: tuple[str, ...] = ALL_VERBS
    printer_columns: tuple[Mapping[str, Any], ...] = ()
    schema: Mapping[str, Any] | None = field(default=None, compare=False)
    scale_paths: tuple[str, str, str] = (".spec.replicas", ".status.replicas", ".status.labelSelector")
    stored_as: GroupKind | None = None
    """Where the objects live when another resource holds them (``events.k8s.io`` Events are ``v1`` Events)."""

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        return self.group_version

    @property
    def key(self) -> GroupKind:
        """Where the store keeps the resource's objects."""
        return self.stored_as or GroupKind(self.group, self.kind)

    @property
    def served_key(self) -> GroupKind:
        """The resource's own identity: its objects' shape on the wire (time fields, field names)."""
        return GroupKind(self.group, self.kind)

    def world_row(self) -> WorldResource:
        return WorldResource(group=self.group, versions=(self.version,), kind=self.kind, plural=self.plural,
                             singular=self.singular, short_names=self.short_names, namespaced=self.namespaced,
                             status=self.status, scale=self.scale, categories=self.categories,
                             list_kind=f"{self.kind}List", connect=self.connect,
                             verbs=() if self.verbs == ALL_VERBS else self.verbs)

    @property
    def log(self) -> bool:
        return "log" in self.connect

    @property
    def stored(self) -> bool:
        """Whether objects of this resource are kept (a review is answered and forgotten)."""
        return "get" in self.verbs

    @property
    def custom(self) -> bool:
        return self.schema is not None or bool(self.printer_columns)

    @property
    def group_resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _served(row: WorldResource) -> Resource:
    """A world row as served: its preferred version (the store keeps one version of each object)."""
    return Resource(group=row.group, version=row.version, kind=row.kind, plural=row.plural, singular=row.singular,
                    namespaced=row.namespaced, short_names=row.short_names, categories=row.categories,
                    status=row.status, scale=row.scale, connect=row.connect, verbs=row.verbs or ALL_VERBS,
                    printer_columns=ROLLWISE_PRINTER_COLUMNS if row.group_kind == ROLLWISE_STATEFULSET else (),
                    stored_as=EVENT_V1 if row.group_kind == EVENT else None)


# The one table (rollwise.cluster.resources) seen as REST. The project's own kinds are not built in: ApiStore installs
# their CRDs (cluster/crd/statefulset.py, cluster/crd/analysis.py), so each is served, defaulted and validated as a
# cluster serves it, by its schema and CEL rules.
BUILTINS: tuple[Resource, ...] = tuple(_served(row) for row in BUILTIN_RESOURCES if row.group != PROJECT_GROUP)


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
            status="status" in sub, scale=scale is not None,
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
        """Built-ins, then custom resources; a CRD for a built-in row (the rollwise kind) replaces that row."""
        custom = [r for rs in self._custom.values() for r in rs]
        shadowed = {(r.group, r.version, r.plural) for r in custom}
        yield from (r for r in self._builtin if (r.group, r.version, r.plural) not in shadowed)
        yield from custom

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        for r in self:
            if r.group == group and r.version == version and r.plural == plural:
                return r
        return None

    def register_in(self, table: ResourceTable, crd: Mapping[str, Any]) -> None:
        """Serve a CRD's resources and make the store key and scope them (its first served version)."""
        self.add_crd(crd)
        rows = self._custom.get(str((crd.get("metadata") or {}).get("name", "")), [])
        if rows:
            table.register(rows[0].world_row())

    def group_versions(self) -> dict[str, list[str]]:
        """Group name -> its versions, in table order (the core group is "")."""
        out: dict[str, list[str]] = {}
        for r in self:
            versions = out.setdefault(r.group, [])
            if r.version not in versions:
                versions.append(r.version)
        return out
