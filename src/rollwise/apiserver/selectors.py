"""Label and field selectors as the query string spells them (``labelSelector``, ``fieldSelector``).

Label requirements: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k`` and ``!k``, joined by
commas. Field selectors: ``=``, ``==`` and ``!=`` on ``metadata.name`` and ``metadata.namespace`` for every kind,
plus the per-kind fields the API server indexes (pods: ``status.phase``, ``spec.nodeName``; events:
``involvedObject.*``, ``reason``, ``type``...). An unsupported field is a 400, as upstream answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Selector", "SelectorError", "parse_field_selector", "parse_label_selector"]


class SelectorError(ValueError):
    """A selector that does not parse or names an unsupported field (HTTP 400)."""


@dataclass(frozen=True, slots=True)
class _Req:
    key: str
    op: str  # =, !=, in, notin, exists, !exists
    values: tuple[str, ...]

    def matches(self, get: Callable[[str], str | None]) -> bool:
        value = get(self.key)
        if self.op == "=":
            return value == self.values[0]
        if self.op == "!=":
            return value != self.values[0]
        if self.op == "in":
            return value is not None and value in self.values
        if self.op == "notin":
            return value is None or value not in self.values
        if self.op == "exists":
            return value is not None
        return value is None


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[_Req, ...] = ()
    fields: bool = False

    def matches(self, obj: Mapping[str, Any]) -> bool:
        if not self.requirements:
            return True
        if self.fields:
            return all(r.matches(lambda k: _field_value(obj, k)) for r in self.requirements)
        lbls = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(lbls.get) for r in self.requirements)


_SET_RE = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\)|(==|!=|=)\s*([^,\s]*))?\s*$")


def _split(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


def parse_label_selector(text: str | None) -> Selector:
    if not text:
        return Selector()
    reqs = []
    for part in _split(text):
        m = _SET_RE.match(part)
        if m is None:
            raise SelectorError(f"unable to parse requirement: {part.strip()!r}")
        neg, key, set_op, set_vals, op, value = m.groups()
        if neg and (set_op or op):
            raise SelectorError(f"unable to parse requirement: {part.strip()!r}")
        if set_op:
            vals = tuple(v.strip() for v in set_vals.split(",") if v.strip())
            reqs.append(_Req(key, set_op, vals))
        elif op:
            reqs.append(_Req(key, "!=" if op == "!=" else "=", (value,)))
        else:
            reqs.append(_Req(key, "!exists" if neg else "exists", ()))
    return Selector(tuple(reqs))


_COMMON_FIELDS = ("metadata.name", "metadata.namespace")
_KIND_FIELDS: Mapping[str, tuple[str, ...]] = {
    "Pod": ("status.phase", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
            "status.podIP", "status.nominatedNodeName"),
    "Event": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
              "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
              "reportingComponent", "source", "type"),
    "Secret": ("type",),
    "Namespace": ("status.phase",),
    "PersistentVolumeClaim": ("status.phase",),
}


def _field_value(obj: Mapping[str, Any], path: str) -> str | None:
    if path == "source":
        return str(((obj.get("source") or {}).get("component")) or "")
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part)
    if path == "metadata.namespace" and cur is None:
        return ""
    return "" if cur is None else str(cur)


def parse_field_selector(text: str | None, kind: str) -> Selector:
    if not text:
        return Selector(fields=True)
    allowed = (*_COMMON_FIELDS, *_KIND_FIELDS.get(kind, ()))
    reqs = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|!=|=)\s*(.*?)\s*$", part)
        if m is None:
            raise SelectorError(f"invalid selector: {part.strip()!r}; can't understand {part.strip()!r}")
        key, op, value = m.groups()
        if key not in allowed:
            raise SelectorError(f'field label not supported: {key}')
        reqs.append(_Req(key, "!=" if op == "!=" else "=", (value,)))
    return Selector(tuple(reqs), fields=True)
