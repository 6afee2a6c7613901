"""Bytes to documents: the one way rollwise reads a manifest, a scenario file or a request body.

Every door (``simulate``, ``compare``, ``plan``, ``validate``, ``explore``, the API server) calls
:func:`load_documents` (or :func:`read_documents` for a path), so one set of limits holds everywhere:

- at most :data:`MAX_DOCUMENT_BYTES` bytes, read no further than that from a file;
- UTF-8 only (a byte-order mark is allowed and dropped), as the Kubernetes API server reads JSON and YAML;
- at most :data:`MAX_NESTING_DEPTH` levels of mappings and lists, checked on the parser's event stream before any
  value is built, so a file nested thousands deep is refused in one linear pass and never recurses;
- no YAML aliases: a Kubernetes object never needs one (``kubectl`` sends JSON, which has none), and refusing them
  outright removes "billion laughs" expansion instead of metering it; anchors without aliases are harmless;
- no duplicate keys (YAML or JSON), as kubectl's strict field validation refuses them;
- every number finite (no ``.nan``, ``.inf``, JSON ``NaN``, ``1e999``) and every integer within int64;
- only JSON-shaped values: string keys; mappings, lists, strings, numbers, booleans and null. YAML timestamps stay
  strings (as ``sigs.k8s.io/yaml`` leaves them); ``!!binary``, ``!!set``, merge keys and custom tags are refused.

YAML goes through libyaml's parser (``yaml.CSafeLoader``) when PyYAML was built with it, else the pure-Python one;
values are built here from the event stream, so each problem is reported with its field path and line.
Problems raise :class:`~rollwise.api.errors.InvalidObject`, which every door renders the same way.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn

import yaml

from rollwise.api.errors import FieldError, InvalidObject

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_INTEGER",
    "MAX_NESTING_DEPTH",
    "Syntax",
    "load_documents",
    "read_documents",
    "read_one_document",
    "syntax_for",
]

# The Kubernetes API server refuses request bodies over 3 MiB; a scenario file holds several objects and steps, so
# a file may be a little larger. Anything beyond is refused before it is parsed.
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024
# The deepest field of a real object (a pod template's affinity terms) is about fifteen levels down.
MAX_NESTING_DEPTH = 64
# int64, the widest integer in the Kubernetes API (and what Go's JSON decoder accepts).
MAX_INTEGER = 2**63 - 1

Syntax = Literal["yaml", "json"]
FILE = "<file>"
_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TAG = "tag:yaml.org,2002:"
_STR = f"{_TAG}str"
_SCALAR_TAGS = {f"{_TAG}{t}" for t in ("str", "null", "bool", "int", "float")}
_CONSTRUCTORS = {tag: yaml.SafeLoader.yaml_constructors[tag] for tag in _SCALAR_TAGS}
_MAP_TAGS = {None, "!", f"{_TAG}map"}
_SEQ_TAGS = {None, "!", f"{_TAG}seq"}
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def syntax_for(path: str | Path) -> Syntax:
    """JSON for ``*.json``, YAML for everything else (YAML also reads most JSON)."""
    return "json" if Path(path).suffix.lower() == ".json" else "yaml"


def read_documents(path: str | Path) -> list[Any]:
    """Every non-empty document of the file at ``path``; raises InvalidObject naming the file and the rule."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            data = f.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as err:
        raise _invalid(str(p), FILE, f"cannot read: {err.strerror or err}", value=str(p)) from err
    return load_documents(data, source=str(p), syntax=syntax_for(p))


def read_one_document(path: str | Path) -> Any:
    """The single document of a file (a scenario): an empty file or several documents are refused."""
    docs = read_documents(path)
    if len(docs) != 1:
        rule = "empty document" if not docs else f"expected one document, found {len(docs)}"
        raise _invalid(str(path), FILE, rule, value=Path(path).name)
    return docs[0]


def load_documents(data: bytes, *, source: str, syntax: Syntax = "yaml") -> list[Any]:
    """The non-empty documents in ``data`` (YAML: a stream of ``---``-separated documents; JSON: one document)."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _invalid(source, FILE, f"larger than {MAX_DOCUMENT_BYTES} bytes (MAX_DOCUMENT_BYTES)",
                       value=f"{len(data)}+ bytes", kind="Forbidden")
    text = _decode(data, source)
    if syntax == "json":
        doc = _json_document(text, source)
        return [] if doc is None else [doc]
    return [doc for doc in _yaml_documents(text, source) if doc is not None]


def _invalid(source: str, path: str, rule: str, *, value: Any = None, kind: str = "Invalid value") -> InvalidObject:
    return InvalidObject([FieldError(path=path, rule=rule, value=value, kind=kind)], source=source)


def _decode(data: bytes, source: str) -> str:
    if data.startswith(_UTF16_BOMS):
        raise _invalid(source, FILE, "UTF-16 is not accepted; save the file as UTF-8", kind="Forbidden")
    try:
        text = data.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError as err:
        raise _invalid(source, FILE, f"not UTF-8: byte 0x{data[err.start]:02x} at offset {err.start}; "
                                     "rollwise reads UTF-8 only", kind="Forbidden") from err
    if "\x00" in text:
        raise _invalid(source, FILE, "contains NUL characters (binary, or UTF-16 without a byte-order mark)",
                       kind="Forbidden")
    return text


# --- JSON -------------------------------------------------------------------------------------------------------


class _Refused(Exception):
    def __init__(self, rule: str, value: Any = None) -> None:
        super().__init__(rule)
        self.rule = rule
        self.value = value


def _json_document(text: str, source: str) -> Any:
    if not text.strip():
        return None
    depth = _json_depth(text)
    if depth > MAX_NESTING_DEPTH:
        raise _invalid(source, FILE, f"nested deeper than {MAX_NESTING_DEPTH} levels (MAX_NESTING_DEPTH)",
                       kind="Forbidden")
    try:
        return json.loads(text, object_pairs_hook=_json_object, parse_constant=_json_constant,
                          parse_float=_json_float, parse_int=_json_int)
    except _Refused as err:
        raise _invalid(source, FILE, err.rule, value=err.value) from err
    except json.JSONDecodeError as err:
        raise _invalid(source, FILE, f"not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})",
                       value=Path(source).name) from err


def _json_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings (a linear scan, before the recursive decoder runs)."""
    depth = deepest = 0
    for ch in re.findall(r"[\[\]{}]", _JSON_STRING.sub("", text)):
        depth = depth + 1 if ch in "[{" else depth - 1
        deepest = max(deepest, depth)
    return deepest


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Refused(f'duplicate key "{key}"', key)
        out[key] = value
    return out


def _json_constant(name: str) -> Any:
    raise _Refused("numbers must be finite (NaN and Infinity are not numbers in JSON)", name)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused("numbers must be finite (this one overflows a 64-bit float)", text)
    return value


def _json_int(text: str) -> int:
    if len(text) > 20 or abs(int(text)) > MAX_INTEGER:
        raise _Refused(f"integers must fit in 64 bits (at most {MAX_INTEGER})", text[:40])
    return int(text)


# --- YAML -------------------------------------------------------------------------------------------------------


class _Frame:
    """An open mapping or list while its events stream in."""

    __slots__ = ("key", "path", "value")

    def __init__(self, value: dict[str, Any] | list[Any], path: str) -> None:
        self.value = value
        self.path = path
        self.key: str | None = None


def _yaml_documents(text: str, source: str) -> Iterator[Any]:
    loader = _LOADER(text)
    try:
        yield from _YamlBuilder(loader, source).documents()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise _invalid(source, FILE, f"not valid YAML: {err.problem or err.context}{where}",
                       value=Path(source).name) from err
    except yaml.YAMLError as err:
        raise _invalid(source, FILE, "not valid YAML: " + " ".join(str(err).split()), value=Path(source).name) from err
    finally:
        loader.dispose()


class _YamlBuilder:
    """Builds JSON-shaped values from the parser's events, refusing what :mod:`documents` refuses as it goes."""

    def __init__(self, loader: yaml.SafeLoader, source: str) -> None:
        self.loader = loader
        self.source = source

    def documents(self) -> Iterator[Any]:
        stack: list[_Frame] = []
        root: list[Any] = []
        get_event = self.loader.get_event
        while self.loader.check_event():
            event = get_event()  # type: ignore[no-untyped-call]
            cls = type(event)  # exact classes: the parser makes no subclasses, and this is the hot loop
            if cls is yaml.ScalarEvent:
                self._add(stack, root, event, self._scalar(event, stack))
            elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
                self._open(stack, root, event)
            elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
                frame = stack.pop()
                self._add(stack, root, event, frame.value, opened=frame)
            elif cls is yaml.DocumentStartEvent:
                root = []
            elif cls is yaml.DocumentEndEvent:
                yield root[0] if root else None
            elif cls is yaml.AliasEvent:
                self._refuse(event, stack, "YAML aliases are not accepted; write the value out", event.anchor)

    def _open(self, stack: list[_Frame], root: list[Any], event: Any) -> None:
        mapping = isinstance(event, yaml.MappingStartEvent)
        if event.tag not in (_MAP_TAGS if mapping else _SEQ_TAGS):
            self._refuse(event, stack, f"the tag {event.tag} is not accepted")
        if stack and isinstance(stack[-1].value, dict) and stack[-1].key is None:
            self._refuse(event, stack, "mapping keys must be strings")
        if len(stack) >= MAX_NESTING_DEPTH:
            self._refuse(event, stack, f"nested deeper than {MAX_NESTING_DEPTH} levels (MAX_NESTING_DEPTH)")
        path = self._child_path(stack) if stack else ""
        stack.append(_Frame({} if mapping else [], path))

    def _add(self, stack: list[_Frame], root: list[Any], event: Any, value: Any, *,
             opened: _Frame | None = None) -> None:
        if not stack:
            root.append(value)
            return
        frame = stack[-1]
        if isinstance(frame.value, list):
            frame.value.append(value)
        elif frame.key is None:
            if opened is not None or not isinstance(value, str):
                self._refuse(event, stack, "mapping keys must be strings; quote this one", value)
            if value in frame.value:
                frame.key = value  # so the error names the repeated field itself
                self._refuse(event, stack, f'duplicate key "{value}"', value, kind="Duplicate value")
            frame.key = value
        else:
            frame.value[frame.key] = value
            frame.key = None

    def _scalar(self, event: yaml.ScalarEvent, stack: list[_Frame]) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:
                return event.value  # quoted: a string whatever it looks like
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
        if tag == _STR:
            return event.value
        if tag == f"{_TAG}timestamp":
            return event.value  # as sigs.k8s.io/yaml: a time stays the string it was written as
        if tag == f"{_TAG}merge":
            self._refuse(event, stack, "merge keys (<<) are not accepted; write the fields out", event.value)
        if tag not in _SCALAR_TAGS:
            self._refuse(event, stack, f"the tag {tag} is not accepted", event.value)
        node = yaml.ScalarNode(tag, event.value)
        try:
            value = _CONSTRUCTORS[tag](self.loader, node)
        except (ValueError, OverflowError, KeyError, TypeError):  # an explicit tag on text that is not of its type
            rule = (f"integers must fit in 64 bits (at most {MAX_INTEGER})" if tag == f"{_TAG}int" and
                    event.value.lstrip("+-").isdigit() else f"not a valid {tag.rsplit(':', 1)[-1]}")
            self._refuse(event, stack, rule, event.value[:40])
        if isinstance(value, float) and not math.isfinite(value):
            self._refuse(event, stack, "must be a finite number", event.value)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INTEGER:
            self._refuse(event, stack, f"integers must fit in 64 bits (at most {MAX_INTEGER})", event.value[:40])
        return value

    @staticmethod
    def _child_path(stack: list[_Frame]) -> str:
        frame = stack[-1]
        if isinstance(frame.value, list):
            return f"{frame.path}[{len(frame.value)}]"
        if frame.key is None:
            return frame.path or FILE
        return f"{frame.path}.{frame.key}" if frame.path else frame.key

    def _refuse(self, event: Any, stack: list[_Frame], rule: str, value: Any = None, *,
                kind: str = "Invalid value") -> NoReturn:
        mark = event.start_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        path = self._child_path(stack) if stack else FILE
        if kind == "Invalid value" and value is None:
            kind = "Forbidden"
        raise _invalid(self.source, path, rule + where, value=value, kind=kind)
