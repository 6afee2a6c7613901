"""Field ownership: ``metadata.managedFields`` kept per manager and operation, and server-side apply over it.

As kube-apiserver's field manager does (structured-merge-diff): a create, update or patch gives its manager the
fields it changed (operation ``Update``) and takes them from every other manager; an apply (operation ``Apply``)
owns exactly the fields of its configuration. An apply that would change a field another manager owns is refused
with 409 and every such field and manager, unless forced, which takes the field over. A field the applier owned
before, left out of its new configuration, and owned by no one else is removed (with the map it leaves empty).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import Conflict
from rollwise.apiserver.storage.fieldsets import (
    FieldSet,
    ListTypes,
    Path,
    delete_at,
    fields_of,
    from_fields_v1,
    key_values,
    to_fields_v1,
    value_at,
)

__all__ = ["ApplyConflict", "Entry", "apply", "default_manager", "record_write"]


class ApplyConflict(Conflict):
    """409 with a ``FieldManagerConflict`` cause per field, as upstream's ``NewConflictError``."""

    def __init__(self, message: str, causes: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.causes = causes


@dataclass(slots=True)
class Entry:
    manager: str
    operation: str
    api_version: str
    time: str
    fields: FieldSet
    subresource: str = ""

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version,
                               "time": self.time, "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(self.fields)}
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def default_manager(user_agent: str) -> str:
    """Upstream's default when a request names no ``fieldManager``: the User-Agent up to its first ``/``."""
    return (user_agent.split("/", 1)[0] or "unknown")[:128]


def _entries(obj: Mapping[str, Any] | None) -> list[Entry]:
    out = []
    for raw in ((obj or {}).get("metadata") or {}).get("managedFields") or ():
        if isinstance(raw, Mapping) and isinstance(raw.get("fieldsV1"), Mapping):
            out.append(Entry(str(raw.get("manager", "")), str(raw.get("operation", "Update")),
                             str(raw.get("apiVersion", "")), str(raw.get("time", "")),
                             from_fields_v1(raw["fieldsV1"]), str(raw.get("subresource") or "")))
    return out


def _store(obj: dict[str, Any], entries: list[Entry]) -> None:
    kept = [e.wire() for e in entries if e.fields]
    meta = obj["metadata"] = dict(obj.get("metadata") or {})
    if kept:
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


def _is_item(path: Path) -> bool:
    return not path[-1].startswith("f:")


def record_write(old: Mapping[str, Any] | None, new: dict[str, Any], *, manager: str, types: ListTypes,
                 api_version: str, now: str, subresource: str = "") -> None:
    """A create, update or (non-apply) patch: ``manager`` gets what it changed; ``new`` carries the result."""
    skip = "spec" if subresource == "status" else "status"
    entries = _entries(old)
    new_fields = fields_of(new, types, skip=skip)
    old_fields = fields_of(old, types, skip=skip) if old is not None else frozenset()
    changed = frozenset(p for p in new_fields if old is None or (
        p not in old_fields if _is_item(p) else value_at(new, p) != value_at(old, p)))
    removed = old_fields - new_fields
    mine = next((e for e in entries if e.manager == manager and e.operation == "Update"
                 and e.subresource == subresource), None)
    for e in entries:
        e.fields = e.fields - changed - removed
    if changed:
        if mine is None:
            mine = Entry(manager, "Update", api_version, now, frozenset(), subresource)
            entries.append(mine)
        mine.fields = mine.fields | changed
        mine.time = now
    _store(new, entries)


def _merge(live: Any, config: Any, types: ListTypes, schema: Mapping[str, Any] | None,
           names: tuple[str, ...]) -> Any:
    if isinstance(live, Mapping) and isinstance(config, Mapping):
        out = dict(live)
        for key, value in config.items():
            out[key] = _merge(live.get(key), value, types, types.child(schema, key), (*names, key))
        return out
    if isinstance(live, list) and isinstance(config, list) and names:
        keys = types.keys(names, schema)
        if keys is None:
            return config
        item_schema = (schema or {}).get("items") if schema is not None else None
        merged = list(live)
        for item in config:
            probe = _probe(item, keys)
            at = next((i for i, old in enumerate(merged) if _probe(old, keys) == probe), None)
            if at is None:
                merged.append(item)
            else:
                merged[at] = _merge(merged[at], item, types, item_schema, names)
        return merged
    return config


def _probe(item: Any, keys: tuple[str, ...]) -> str:
    if keys and isinstance(item, Mapping):
        return json.dumps(key_values(item, keys), sort_keys=True)
    return json.dumps(item, sort_keys=True)


def _render(path: Path) -> str:
    out = ""
    for key in path:
        if key.startswith("f:"):
            out += "." + key[2:]
        elif key.startswith("k:"):
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(key[2:]).items()) + "]"
        else:
            out += f"[={key[2:]}]"
    return out


def _conflict_message(conflicts: list[tuple[Path, Entry]]) -> str:
    """Upstream's wording (structured-merge-diff ``Conflicts.Error``, with the manager's apiVersion)."""
    by_manager: dict[str, list[Path]] = {}
    for path, e in conflicts:
        by_manager.setdefault(f'"{e.manager}"' + (f" using {e.api_version}" if e.api_version else ""),
                              []).append(path)
    if len(conflicts) == 1:
        (who, paths), = by_manager.items()
        return f"Apply failed with 1 conflict: conflict with {who}: {_render(paths[0])}"
    parts = [f"conflicts with {who}:\n" + "\n".join(f"- {_render(p)}" for p in paths)
             for who, paths in by_manager.items()]
    return f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(parts)


def apply(live: Mapping[str, Any] | None, config: Mapping[str, Any], *, manager: str, force: bool,
          types: ListTypes, api_version: str, now: str, subresource: str = "") -> dict[str, Any]:
    """The object after ``manager`` applies ``config`` to ``live`` (None: the object is created by the apply)."""
    skip = "spec" if subresource == "status" else "status"
    applied = fields_of(config, types, skip=skip)
    entries = _entries(live)
    base: dict[str, Any] = json.loads(json.dumps(live)) if live is not None else {}
    conflicts: list[tuple[Path, Entry]] = []
    for e in entries:
        if e.manager == manager and e.operation == "Apply":
            continue
        for path in sorted(applied & e.fields):
            if not _is_item(path) and value_at(config, path) != value_at(base, path):
                conflicts.append((path, e))
    if conflicts and not force:
        causes = [{"reason": "FieldManagerConflict", "message": f'conflict with "{e.manager}"'
                   + (" using " + e.api_version if e.api_version else ""), "field": _render(p)}
                  for p, e in conflicts]
        raise ApplyConflict(_conflict_message(conflicts), causes)
    taken = frozenset(p for p, _ in conflicts)
    mine = next((e for e in entries if e.manager == manager and e.operation == "Apply"
                 and e.subresource == subresource), None)
    before = mine.fields if mine is not None else frozenset()
    others = [e for e in entries if e is not mine]
    for e in others:
        e.fields = e.fields - taken
    body = {k: v for k, v in config.items() if k not in (skip, "metadata")}
    meta_config = {k: v for k, v in (config.get("metadata") or {}).items()
                   if k in ("labels", "annotations", "ownerReferences", "finalizers")}
    merged: dict[str, Any] = _merge(base, {**body, "metadata": meta_config}, types, types.root(), ())
    owned_elsewhere = frozenset().union(*(e.fields for e in others)) if others else frozenset()
    kept = applied | owned_elsewhere
    prefixes = {p[:i] for p in kept for i in range(1, len(p))}  # a map someone still sets a field in stays
    for path in sorted(before - kept - prefixes, key=len, reverse=True):
        delete_at(merged, path)
    merged.setdefault("metadata", {})
    for key in ("name", "namespace"):
        given = (config.get("metadata") or {}).get(key)
        if given and key not in merged["metadata"]:
            merged["metadata"][key] = given
    if mine is None:
        mine = Entry(manager, "Apply", api_version, now, applied, subresource)
        entries.append(mine)
    elif _without_managed(merged) != _without_managed(live):
        # Upstream's managedFieldsUpdater.Apply (k8s.io/apimachinery/pkg/util/managedfields/internal) stamps the
        # time only when the apply changed the object: an apply of the same config is then a no-op the store skips.
        mine.time = now
    mine.fields, mine.api_version = applied, api_version
    _store(merged, entries)
    return merged


def _without_managed(obj: Mapping[str, Any] | None) -> Any:
    if obj is None:
        return None
    return {**obj, "metadata": {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}}
