"""The resources the server serves: the world's resource table (``rollwise.cluster.resources``) seen as REST.

The world's table is the one source: each served ``Resource`` holds the world row it serves (names, scope,
subresources, verbs) and adds only what the server needs on top: the version served, a CRD's printer columns,
schema and scale paths. A CustomResourceDefinition is read into a world row once (``crd_row``); when one is
created, its row joins the store's table (so the store keys and scopes its objects as the API does) and its served
versions join this registry.
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

__all__ = ["ALL_VERBS", "BUILTINS", "Registry", "Resource", "crd_resources", "crd_row"]

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_SUB_VERBS = ("get", "patch", "update")


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    """One served version of a row of the world's table: the row (``rollwise.cluster.resources.Resource``) says what
    the resource is — its names, scope, subresources and verbs, typed there once — and this adds what only the
    server needs: the version served, a CRD's printer columns and schema, the scale paths, and where the objects
    are stored when another resource holds them."""

    row: WorldResource
    version: str
    printer_columns: tuple[Mapping[str, Any], ...] = ()
    schema: Mapping[str, Any] | None = field(default=None, compare=False)
    scale_paths: tuple[str, str, str] = (".spec.replicas", ".status.replicas", ".status.labelSelector")
    stored_as: GroupKind | None = None
    """Where the objects live when another resource holds them (``events.k8s.io`` Events are ``v1`` Events)."""

    @property
    def group(self) -> str:
        return self.row.group

    @property
    def kind(self) -> str:
        return self.row.kind

    @property
    def plural(self) -> str:
        return self.row.plural

    @property
    def singular(self) -> str:
        return self.row.singular

    @property
    def namespaced(self) -> bool:
        return self.row.namespaced

    @property
    def short_names(self) -> tuple[str, ...]:
        return self.row.short_names

    @property
    def categories(self) -> tuple[str, ...]:
        return self.row.categories

    @property
    def status(self) -> bool:
        return self.row.status

    @property
    def scale(self) -> bool:
        return self.row.scale

    @property
    def connect(self) -> tuple[str, ...]:
        """Subresources the server answers itself: a pod's ``log``, ``exec``, ``attach``, ``portforward``."""
        return self.row.connect

    @property
    def verbs(self) -> tuple[str, ...]:
        """The verbs served: the row's, or every verb (a row that lists none is a stored resource)."""
        return self.row.verbs or ALL_VERBS

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        return self.group_version

    @property
    def key(self) -> GroupKind:
        """Where the store keeps the resource's objects."""
        return self.stored_as or self.row.group_kind

    @property
    def served_key(self) -> GroupKind:
        """The resource's own identity: its objects' shape on the wire (time fields, field names)."""
        return self.row.group_kind

    @property
    def log(self) -> bool:
        return "log" in self.connect

    @property
    def stored(self) -> bool:
        """Whether objects of this resource are kept (a review is answered and forgotten)."""
        return self.row.stored

    @property
    def custom(self) -> bool:
        return self.schema is not None or bool(self.printer_columns)

    @property
    def group_resource(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _served(row: WorldResource) -> Resource:
    """A world row as served: its preferred version (the store keeps one version of each object)."""
    return Resource(row=row, version=row.version,
                    printer_columns=ROLLWISE_PRINTER_COLUMNS if row.group_kind == ROLLWISE_STATEFULSET else (),
                    stored_as=EVENT_V1 if row.group_kind == EVENT else None)


# The one table (rollwise.cluster.resources) seen as REST. The project's own kinds are not built in: ApiStore installs
# their CRDs (cluster/crd/statefulset.py, cluster/crd/analysis.py), so each is served, defaulted and validated as a
# cluster serves it, by its schema and CEL rules.
BUILTINS: tuple[Resource, ...] = tuple(_served(row) for row in BUILTIN_RESOURCES if row.group != PROJECT_GROUP)


def _crd_row(spec: Mapping[str, Any], versions: list[Mapping[str, Any]]) -> WorldResource:
    names = spec.get("names") or {}
    kind = str(names.get("kind", ""))
    sub = versions[0].get("subresources") or {}
    return WorldResource(
        group=str(spec.get("group", "")), versions=tuple(str(v.get("name", "")) for v in versions), kind=kind,
        plural=str(names.get("plural", "")), singular=str(names.get("singular") or kind.lower()),
        short_names=tuple(names.get("shortNames") or ()), namespaced=spec.get("scope") != "Cluster",
        status="status" in sub, scale=sub.get("scale") is not None,
        categories=tuple(names.get("categories") or ()), list_kind=f"{kind}List")


def _served_versions(crd: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]]:
    spec = crd.get("spec") or {}
    return spec, [v for v in spec.get("versions") or () if v.get("served", True)]


def crd_row(crd: Mapping[str, Any]) -> WorldResource | None:
    """A CustomResourceDefinition as a row of the world's table: its names, scope, its served versions and the
    first one's subresources (the store keys its objects by that version). None when it serves no version."""
    spec, versions = _served_versions(crd)
    return _crd_row(spec, versions) if versions else None


def crd_resources(crd: Mapping[str, Any]) -> list[Resource]:
    """The served versions of a CustomResourceDefinition, as table rows: each over the world row of that version."""
    spec, versions = _served_versions(crd)
    out = []
    for v in versions:
        scale = (v.get("subresources") or {}).get("scale")
        paths = (".spec.replicas", ".status.replicas", ".status.labelSelector")
        if isinstance(scale, Mapping):
            paths = (str(scale.get("specReplicasPath", paths[0])), str(scale.get("statusReplicasPath", paths[1])),
                     str(scale.get("labelSelectorPath", paths[2])))
        out.append(Resource(row=_crd_row(spec, [v]), version=str(v.get("name", "")),
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
        shadowed = {(r.row.group, r.version, r.row.plural) for r in custom}
        yield from (r for r in self._builtin if (r.row.group, r.version, r.row.plural) not in shadowed)
        yield from custom

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        for r in self:  # the row's fields directly: this runs on every request
            row = r.row
            if row.plural == plural and row.group == group and r.version == version:
                return r
        return None

    def register_in(self, table: ResourceTable, crd: Mapping[str, Any]) -> None:
        """Serve a CRD's resources and make the store key and scope them (its first served version)."""
        self.add_crd(crd)
        row = crd_row(crd)
        if row is not None:
            table.register(row)

    def group_versions(self) -> dict[str, list[str]]:
        """Group name -> its versions, in table order (the core group is "")."""
        out: dict[str, list[str]] = {}
        for r in self:
            versions = out.setdefault(r.group, [])
            if r.version not in versions:
                versions.append(r.version)
        return out
