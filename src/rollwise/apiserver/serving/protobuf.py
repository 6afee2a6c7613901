"""The kinds ``kubectl create <generator>`` sends as protobuf: Namespace, ConfigMap, Secret, Service here, the rest
by field table (``protobuf_kinds``); and the reviews behind ``kubectl auth can-i`` and ``whoami``.

kubectl 1.32 sends those generators' bodies in the Kubernetes protobuf envelope and treats a 415 as fatal, so
the server reads them (``kubectl-wire.md`` §4.1). The envelope is ``k8s\\0`` then a ``runtime.Unknown``
(1 typeMeta {1 apiVersion, 2 kind}, 2 raw); ``raw`` is the object, field numbers from the ``generated.proto`` files
of k8s.io/api core/v1 and apimachinery meta/v1. Only the fields those generators fill are decoded; an unknown
kind or a malformed message raises ``ProtobufError``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import Any

from rollwise.apiserver.serving.protobuf_kinds import MESSAGES, Table

__all__ = ["MAGIC", "ProtobufError", "decode_object"]

MAGIC = b"k8s\x00"


class ProtobufError(ValueError):
    """A body that is not a protobuf object of a kind this server reads."""


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ProtobufError("truncated varint")
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value): varints as int, length-delimited as bytes; fixed widths are skipped."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            yield number, value
        elif wire == 2:
            length, i = _varint(data, i)
            if i + length > len(data):
                raise ProtobufError("truncated field")
            yield number, data[i:i + length]
            i += length
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")


def _str(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a string")
    return value.decode("utf-8")


def _map(value: int | bytes, *, as_bytes: bool = False) -> tuple[str, str]:
    if not isinstance(value, bytes):
        raise ProtobufError("expected a map entry")
    key, val = "", b""
    for n, v in _fields(value):
        if n == 1:
            key = _str(v)
        elif n == 2 and isinstance(v, bytes):
            val = v
    return key, base64.b64encode(val).decode() if as_bytes else val.decode("utf-8")


def _meta(data: bytes) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for n, v in _fields(data):
        if n == 1:
            meta["name"] = _str(v)
        elif n == 2:
            meta["generateName"] = _str(v)
        elif n == 3:
            meta["namespace"] = _str(v)
        elif n in (11, 12):
            k, val = _map(v)
            meta.setdefault("labels" if n == 11 else "annotations", {})[k] = val
        elif n == 14:
            meta.setdefault("finalizers", []).append(_str(v))
    return meta


def _int_or_string(data: bytes) -> int | str:
    kind, int_val, str_val = 0, 0, ""
    for n, v in _fields(data):
        if n == 1 and isinstance(v, int):
            kind = v
        elif n == 2 and isinstance(v, int):
            int_val = v
        elif n == 3:
            str_val = _str(v)
    return str_val if kind == 1 else int_val


def _service_port(data: bytes) -> dict[str, Any]:
    port: dict[str, Any] = {}
    for n, v in _fields(data):
        if n == 1:
            port["name"] = _str(v)
        elif n == 2:
            port["protocol"] = _str(v)
        elif n == 3 and isinstance(v, int):
            port["port"] = v
        elif n == 4 and isinstance(v, bytes):
            port["targetPort"] = _int_or_string(v)
        elif n == 5 and isinstance(v, int):
            port["nodePort"] = v
    return port


def _service_spec(data: bytes) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for n, v in _fields(data):
        if n == 1 and isinstance(v, bytes):
            spec.setdefault("ports", []).append(_service_port(v))
        elif n == 2:
            k, val = _map(v)
            spec.setdefault("selector", {})[k] = val
        elif n == 3:
            spec["clusterIP"] = _str(v)
        elif n == 4:
            spec["type"] = _str(v)
        elif n == 11:
            spec["externalName"] = _str(v)
    return spec


def _namespace(fields: list[tuple[int, int | bytes]], obj: dict[str, Any]) -> None:
    for n, v in fields:
        if n == 2 and isinstance(v, bytes):
            obj["spec"] = {"finalizers": [_str(f) for m, f in _fields(v) if m == 1]}


def _configmap(fields: list[tuple[int, int | bytes]], obj: dict[str, Any]) -> None:
    for n, v in fields:
        if n in (2, 3):
            k, val = _map(v, as_bytes=n == 3)
            obj.setdefault("data" if n == 2 else "binaryData", {})[k] = val
        elif n == 4 and isinstance(v, int):
            obj["immutable"] = bool(v)


def _secret(fields: list[tuple[int, int | bytes]], obj: dict[str, Any]) -> None:
    for n, v in fields:
        if n in (2, 4):
            k, val = _map(v, as_bytes=n == 2)
            obj.setdefault("data" if n == 2 else "stringData", {})[k] = val
        elif n == 3:
            obj["type"] = _str(v)
        elif n == 5 and isinstance(v, int):
            obj["immutable"] = bool(v)


def _service(fields: list[tuple[int, int | bytes]], obj: dict[str, Any]) -> None:
    for n, v in fields:
        if n == 2 and isinstance(v, bytes):
            obj["spec"] = _service_spec(v)


_RESOURCE_ATTRIBUTES = ("namespace", "verb", "group", "version", "resource", "subresource", "name")


def _strings(data: bytes, names: tuple[str, ...]) -> dict[str, Any]:
    """A message whose fields 1..n are the strings ``names``."""
    return {names[n - 1]: _str(v) for n, v in _fields(data) if 0 < n <= len(names) and isinstance(v, bytes)}


def _access_review(fields: list[tuple[int, int | bytes]], obj: dict[str, Any]) -> None:
    """SelfSubjectAccessReview (`kubectl auth can-i`): spec 2 {1 resourceAttributes, 2 nonResourceAttributes}."""
    for n, v in fields:
        if n == 2 and isinstance(v, bytes):
            spec: dict[str, Any] = {}
            for m, w in _fields(v):
                if m == 1 and isinstance(w, bytes):
                    spec["resourceAttributes"] = _strings(w, _RESOURCE_ATTRIBUTES)
                elif m == 2 and isinstance(w, bytes):
                    spec["nonResourceAttributes"] = _strings(w, ("path", "verb"))
            obj["spec"] = spec


def _rules_review(fields: list[tuple[int, int | bytes]], obj: dict[str, Any]) -> None:
    """SelfSubjectRulesReview (`kubectl auth can-i --list`): spec 2 {1 namespace}."""
    for n, v in fields:
        if n == 2 and isinstance(v, bytes):
            obj["spec"] = _strings(v, ("namespace",))


def _self_review(fields: list[tuple[int, int | bytes]], obj: dict[str, Any]) -> None:
    """SelfSubjectReview (`kubectl auth whoami`): metadata only; the server fills the status."""


_KINDS: dict[tuple[str, str], Callable[[list[tuple[int, int | bytes]], dict[str, Any]], None]] = {
    ("v1", "Namespace"): _namespace,
    ("v1", "ConfigMap"): _configmap,
    ("v1", "Secret"): _secret,
    ("v1", "Service"): _service,
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): _access_review,
    ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): _rules_review,
    ("authentication.k8s.io/v1", "SelfSubjectReview"): _self_review,
}


def _drop_empty(value: Any) -> Any:
    """Without the zero values protobuf writes for unset scalars (Go's omitempty on the JSON side)."""
    if isinstance(value, dict):
        out = {k: _drop_empty(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ("", 0, None, [], {}) or k in ("port",)}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


def _quantity(data: bytes) -> str:
    return next((_str(v) for n, v in _fields(data) if n == 1), "")


def _value(kind: Any, v: int | bytes) -> Any:
    if kind == "int":
        if not isinstance(v, int):
            raise ProtobufError("expected a number")
        return v - (1 << 64) if v >= 1 << 63 else v
    if kind == "bool":
        return bool(v)
    if not isinstance(v, bytes):
        raise ProtobufError("expected a message or a string")
    if kind == "str":
        return _str(v)
    if kind == "meta":
        return _meta(v)
    if kind == "ios":
        return _int_or_string(v)
    return _message(kind, v)


def _message(table: Table, data: bytes) -> dict[str, Any]:
    """A message decoded by its field table (``protobuf_kinds``)."""
    out: dict[str, Any] = {}
    for n, v in _fields(data):
        entry = table.get(n)
        if entry is None:
            continue
        name, kind, repeated = entry
        if kind in ("map", "qmap"):
            if not isinstance(v, bytes):
                raise ProtobufError("expected a map entry")
            key, raw = "", b""
            for m, w in _fields(v):
                if m == 1:
                    key = _str(w)
                elif m == 2 and isinstance(w, bytes):
                    raw = w
            out.setdefault(name, {})[key] = _quantity(raw) if kind == "qmap" else raw.decode("utf-8")
        elif repeated:
            out.setdefault(name, []).append(_value(kind, v))
        elif not name:
            out.update(_value(kind, v))
        else:
            out[name] = _value(kind, v)
    return out


def decode_object(body: bytes) -> dict[str, Any]:
    """The JSON-shaped object in a protobuf request body."""
    if not body.startswith(MAGIC):
        raise ProtobufError("not a Kubernetes protobuf body (no k8s\\0 prefix)")
    api_version = kind = ""
    raw = b""
    for n, v in _fields(body[len(MAGIC):]):
        if n == 1 and isinstance(v, bytes):
            for m, w in _fields(v):
                if m == 1:
                    api_version = _str(w)
                elif m == 2:
                    kind = _str(w)
        elif n == 2 and isinstance(v, bytes):
            raw = v
    decode = _KINDS.get((api_version, kind))
    table = MESSAGES.get((api_version, kind))
    if decode is None and table is None:
        raise ProtobufError(f"protobuf bodies of {kind or 'unknown kind'} ({api_version}) are not supported")
    fields = list(_fields(raw))
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {}}
    for n, v in fields:
        if n == 1 and isinstance(v, bytes):
            obj["metadata"] = _meta(v)
    if decode is not None:
        decode(fields, obj)
    else:
        assert table is not None
        obj.update(_message(table, raw))
    cleaned: dict[str, Any] = _drop_empty(obj)
    cleaned.setdefault("metadata", {})
    return cleaned
