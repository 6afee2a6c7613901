"""Label and field selectors as the API server reads them from a query string: pure parsing and matching.

Label selectors (``k8s.io/apimachinery/pkg/labels``): requirements joined by commas, each one of ``k=v``,
``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k`` (exists) and ``!k`` (does not exist). ``!=`` and
``notin`` match objects that lack the key, as upstream does.

Field selectors (``k8s.io/apimachinery/pkg/fields``): ``f=v``, ``f==v``, ``f!=v`` joined by commas a backslash
does not escape (empty terms skipped; a value escapes a backslash, comma or equals sign), over the fields each
resource supports: ``metadata.name`` and ``metadata.namespace`` everywhere; pods ``status.phase`` and
``spec.nodeName`` (and a few more upstream serves); events ``involvedObject.*``, ``reason``, ``type``. Any other field
is refused as upstream's ``field label not supported`` (a 400 Bad Request).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rollwise.api.errors import BadRequest
from rollwise.cluster.resources import EVENT, EVENT_V1, POD, GroupKind

__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelRequirement",
    "LabelSelector",
    "field_selector_of",
    "label_selector_of",
    "parse_field_selector",
    "parse_label_selector",
]

LabelOp = Literal["=", "!=", "in", "notin", "exists", "!exists"]

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_KEY_RE = re.compile(f"^{_KEY}$")
_VALUE_RE = re.compile(f"^{_VALUE}$")
_SET_RE = re.compile(rf"^({_KEY})\s+(in|notin)\s+\((.*)\)$")


@dataclass(frozen=True, slots=True)
class LabelRequirement:
    key: str
    op: LabelOp
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values  # != and notin


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed label selector; the empty selector matches everything (a list with no ``labelSelector``)."""

    requirements: tuple[LabelRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside parentheses (``a in (x,y),b`` is two requirements)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _bad_label(selector: str, why: str) -> BadRequest:
    return BadRequest(f'unable to parse requirement: invalid label selector "{selector}": {why}')


def _check(selector: str, key: str, values: tuple[str, ...]) -> None:
    if not _KEY_RE.match(key) or len(key.rpartition("/")[2]) > 63:
        raise _bad_label(selector, f"invalid label key {key!r}")
    for v in values:
        if len(v) > 63 or not _VALUE_RE.match(v):
            raise _bad_label(selector, f"invalid label value {v!r}")


def parse_label_selector(selector: str | None) -> LabelSelector:
    """Parse a ``labelSelector`` query value. Raises BadRequest for a malformed one."""
    if not selector or not selector.strip():
        return LabelSelector()
    out = []
    for raw in _split_top_level(selector):
        part = raw.strip()
        if not part:
            raise _bad_label(selector, "empty requirement")
        req: LabelRequirement
        if m := _SET_RE.match(part):
            values = tuple(v.strip() for v in m.group(4).split(",")) if m.group(4).strip() else ()
            if not values:
                raise _bad_label(selector, f"{m.group(3)} needs at least one value")
            req = LabelRequirement(m.group(1), m.group(3), values)  # type: ignore[arg-type]
        elif part.startswith("!"):
            req = LabelRequirement(part[1:].strip(), "!exists")
        elif "!=" in part:
            k, _, v = part.partition("!=")
            req = LabelRequirement(k.strip(), "!=", (v.strip(),))
        elif "==" in part:
            k, _, v = part.partition("==")
            req = LabelRequirement(k.strip(), "=", (v.strip(),))
        elif "=" in part:
            k, _, v = part.partition("=")
            req = LabelRequirement(k.strip(), "=", (v.strip(),))
        else:
            req = LabelRequirement(part, "exists")
        _check(selector, req.key, req.values)
        out.append(req)
    return LabelSelector(tuple(out))


# -- field selectors -----------------------------------------------------------------------------------------


def _path(*keys: str) -> Callable[[Mapping[str, Any]], str]:
    def read(obj: Mapping[str, Any]) -> str:
        value: Any = obj
        for k in keys:
            value = value.get(k) if isinstance(value, Mapping) else None
        return "" if value is None else str(value)
    return read


_COMMON: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}
_EVENT_FIELDS = {
    **{f"involvedObject.{f}": _path("involvedObject", f)
       for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
    "reason": _path("reason"),
    "type": _path("type"),
    "source": _path("source", "component"),
    "reportingComponent": _path("reportingComponent"),
}
_FIELDS: dict[GroupKind, dict[str, Callable[[Mapping[str, Any]], str]]] = {
    POD: {"status.phase": _path("status", "phase"), "spec.nodeName": _path("spec", "nodeName"),
          "spec.restartPolicy": _path("spec", "restartPolicy"), "spec.schedulerName": _path("spec", "schedulerName"),
          "spec.serviceAccountName": _path("spec", "serviceAccountName"), "status.podIP": _path("status", "podIP"),
          "status.nominatedNodeName": _path("status", "nominatedNodeName")},
    EVENT_V1: _EVENT_FIELDS,
    # events.k8s.io names the involved object ``regarding``; its field selectors keep the v1 names.
    EVENT: {**{f"involvedObject.{f}": _path("regarding", f)
               for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
            "reason": _path("reason"), "type": _path("type"), "reportingComponent": _path("reportingController")},
}


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    field: str
    negated: bool
    value: str
    read: Callable[[Mapping[str, Any]], str]

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (self.read(obj) == self.value) != self.negated


@dataclass(frozen=True, slots=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all(r.matches(obj) for r in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)


def _split_terms(selector: str) -> list[str]:
    """The selector's terms: split at each comma a backslash does not escape (apimachinery fields.splitTerms)."""
    terms, start, escaped = [], 0, False
    for i, c in enumerate(selector):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == ",":
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return terms


_OPERATORS = ("!=", "==", "=")  # tried in this order at each position, as fields.splitTerm does


def _split_term(term: str) -> tuple[str, str, str] | None:
    """(field, operator, value) at the first position where an operator starts; None when there is none."""
    for i in range(len(term)):
        for op in _OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def _unescape(value: str) -> str:
    """A value with its escapes (a backslash before a backslash, comma or equals sign) undone; another escape, a
    trailing backslash or a bare comma or equals sign is a BadRequest in apimachinery's words
    (fields.UnescapeValue; a rune prints as its number there)."""
    out, escaped = [], False
    for c in value:
        if escaped:
            if c not in "\\,=":
                raise BadRequest(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in ",=":
            raise BadRequest(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if escaped:
        raise BadRequest("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_field_selector(selector: str | None, resource: GroupKind) -> FieldSelector:
    """Parse a ``fieldSelector`` for ``resource`` as apimachinery's ``fields.ParseSelector`` does: terms split at
    unescaped commas, empty terms skipped (``metadata.name=x,`` is one term), ``!=``, ``==`` or ``=``, the value
    unescaped, nothing trimmed. Raises BadRequest for a malformed selector or an unsupported field."""
    if not selector:
        return FieldSelector()
    supported = {**_COMMON, **_FIELDS.get(resource, {})}
    out = []
    for part in _split_terms(selector):
        if part == "":
            continue
        split = _split_term(part)
        if split is None:
            raise BadRequest(f"invalid selector: '{selector}'; can't understand '{part}'")
        field, op, value = split
        read = supported.get(field)
        if read is None:
            raise BadRequest(f'field label not supported: {field} (for {resource})')
        out.append(FieldRequirement(field, op == "!=", _unescape(value), read))
    return FieldSelector(tuple(out))


def label_selector_of(selector: str | LabelSelector | None) -> LabelSelector:
    """A parsed label selector from a query string (or one already parsed)."""
    return selector if isinstance(selector, LabelSelector) else parse_label_selector(selector)


def field_selector_of(selector: str | FieldSelector | None, resource: GroupKind) -> FieldSelector:
    """A parsed field selector for ``resource`` from a query string (or one already parsed)."""
    return selector if isinstance(selector, FieldSelector) else parse_field_selector(selector, resource)
