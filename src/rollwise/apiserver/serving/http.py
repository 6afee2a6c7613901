"""HTTP helpers: JSON replies with the exact content type clients need, request bodies, query flags, Tables.

Replies are ``web.Response(body=..., content_type="application/json")``: lightkube types errors only when the
Content-Type is exactly ``application/json`` (aiohttp's ``json_response`` adds a charset).

A stored object is encoded to JSON bytes once per version (``wire_bytes``): the reply to the write that made it
encodes it, and every later get, list and watch event that sends it reuses those bytes. A list body is the cached
items, joined and sent a slice at a time (``ListBody``), never the whole list serialised again (a list of 10,000
pods is 10 MB of JSON).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.payload import Payload

from rollwise.api.errors import BadRequest, Invalid, InvalidObject
from rollwise.api.meta import Obj
from rollwise.apiserver.kinds import event_shapes
from rollwise.apiserver.kinds.printers import columns_for
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.serving.protobuf import ProtobufError, decode_object
from rollwise.apiserver.serving.status import status_body
from rollwise.cluster.documents import FILE, MAX_DOCUMENT_BYTES, Syntax, load_documents
from rollwise.cluster.wire import encode

__all__ = ["bool_flag", "dumps", "json_reply", "list_reply", "object_reply", "ok_reply", "read_body", "status_reply",
           "table", "wants_table", "wire_bytes", "wire_object"]

_PROTOBUF = "application/vnd.kubernetes.protobuf"

dumps = msgspec.json.Encoder().encode
"""Compact JSON bytes of JSON values (UTF-8 as it is, not escaped; about ten times json.dumps's speed)."""


def json_reply(body: Any, status: int = 200, *, content_type: str = "application/json") -> web.Response:
    # A trailing newline, as kube-apiserver's JSON encoder writes one (clients that print bodies show it).
    return web.Response(body=dumps(body) + b"\n", status=status, content_type=content_type)


def object_reply(resource: Resource, obj: Obj, status: int = 200, *, stored: bool = True) -> web.Response:
    """An object as the reply, from its cached encoding (``wire_bytes``)."""
    return web.Response(body=wire_bytes(resource, obj, stored=stored) + b"\n", status=status,
                        content_type="application/json")


def list_reply(resource: Resource, objects: Iterable[Obj], rv: str) -> web.Response:
    """A ``<Kind>List`` of stored objects: the head, then each item's cached bytes, streamed (``ListBody``)."""
    head = dumps({"kind": f"{resource.kind}List", "apiVersion": resource.api_version,
                  "metadata": {"resourceVersion": rv}})
    parts = _CACHE.many(resource, objects) or [b""]
    parts[0] = head[:-1] + b',"items":[' + parts[0]
    parts[-1] += b"]}\n"
    return web.Response(body=ListBody(parts), content_type="application/json")


class ListBody(Payload):
    """A list body as its items' cached bytes, joined with commas a slice at a time as the client takes them.

    One 10 MB bytes object for a list of 10,000 pods would be copied again with the headers, then encrypted whole
    before the first byte left; slices of ``CHUNK`` bytes go out while the next is joined, the client decrypts
    while the server encrypts, and flow control holds no more than the socket buffers. The length is known up
    front, so the reply keeps its Content-Length (no chunked encoding)."""

    CHUNK = 256 * 1024

    def __init__(self, parts: list[bytes]) -> None:
        super().__init__(parts, content_type="application/json")
        self._parts = parts
        self._length = sum(map(len, parts)) + len(parts) - 1
        self._size = self._length

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return b",".join(self._parts).decode(encoding, errors)

    async def write(self, writer: AbstractStreamWriter) -> None:
        parts = self._parts
        step = max(1, self.CHUNK * len(parts) // max(1, self._length))
        await writer.write(b",".join(parts[:step]))
        for start in range(step, len(parts), step):
            await writer.write(b",".join([b"", *parts[start:start + step]]))  # the comma before the slice

    async def write_with_length(self, writer: AbstractStreamWriter, content_length: int | None) -> None:
        await self.write(writer)  # Content-Length is this body's own size: never a shorter one


def status_reply(code: int, message: str, *, reason: str | None = None,
                 details: dict[str, Any] | None = None) -> web.Response:
    return json_reply(status_body(code, message, reason=reason, details=details), code)


class BodyError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


async def ok_reply(_request: web.Request) -> web.Response:
    """``/healthz``, ``/readyz`` and ``/livez``."""
    return web.Response(text="ok", content_type="text/plain")


async def read_body(request: web.Request) -> Any:
    """The request body as JSON values (wire form); BodyError(415) for protobuf, (413) if too large.

    Every JSON or YAML body goes through ``cluster.documents.load_documents``, the loader every other door uses,
    so its limits hold here too: no aliases, no duplicate keys, finite numbers, bounded size and depth, UTF-8.
    A problem with the body as a whole is 400 BadRequest; one at a field is 422 Invalid with the field's path.
    """
    ctype = request.content_type or "application/json"
    if (request.content_length or 0) > MAX_DOCUMENT_BYTES:
        raise BodyError(413, f"Request entity too large: the body is larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise BodyError(413, f"Request entity too large: the body is larger than {MAX_DOCUMENT_BYTES} bytes"
                        ) from None
    if ctype.startswith(_PROTOBUF):
        try:
            return decode_object(raw)
        except ProtobufError as err:
            raise BodyError(415, f"{err}: rollwise up reads protobuf only for the kinds kubectl's `create "
                                 "<generator>` commands send; write the object to a "
                                 "file and use `kubectl create -f` or `kubectl apply -f` instead") from None
    return parse_body(raw)


def parse_body(raw: bytes) -> Any:
    """One request body's value: JSON when it starts as a JSON object or array does, YAML otherwise (whatever
    the Content-Type says: clients send YAML under ``application/json`` too); an empty body is ``{}``."""
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise BodyError(413, f"Request entity too large: the body is larger than {MAX_DOCUMENT_BYTES} bytes")
    start = raw.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
    if not start:
        return {}
    syntax: Syntax = "json" if start in (b"{", b"[") else "yaml"
    try:
        docs = load_documents(raw, source="request body", syntax=syntax)
    except InvalidObject as err:
        whole = [e for e in err.errors if e.path == FILE]
        if whole:
            raise BadRequest(f"the request body cannot be decoded: {whole[0].rule}") from None
        raise Invalid("the request body cannot be decoded: " + "; ".join(map(str, err.errors)),
                      errors=err.errors) from None
    if len(docs) != 1:
        raise BadRequest(f"the request body must hold one object, found {len(docs)} YAML documents")
    return docs[0]


def bool_flag(value: str | None) -> bool:
    """A boolean query parameter as apimachinery converts it (``runtime/conversion.go``,
    ``Convert_Slice_string_To_bool``): absent is false, ``false`` or ``0`` in any case is false, and any other value,
    the empty one included, is true. Laxer than Go's ``strconv.ParseBool``: ``?watch=yes`` starts a watch."""
    return value is not None and value.lower() not in ("false", "0")


def wants_table(accept: str) -> str | None:
    """The Table version asked for in Accept (``v1`` or ``v1beta1``), or None."""
    for part in accept.split(","):
        params = {p.strip() for p in part.split(";")}
        if "as=Table" in params and "g=meta.k8s.io" in params:
            return "v1beta1" if "v=v1beta1" in params else "v1"
    return None


class _WireCache:
    """The JSON bytes of stored objects as served, per served resource version and by namespace and name. A stored
    object never changes (every write stores a new dict), so the entry of a key holds as long as the store holds
    the same dict; a newer version replaces it. ``size`` bounds each resource's entries (the oldest written go
    first): keys of deleted objects stay until then."""

    def __init__(self, size: int = 100_000) -> None:
        self.size = size
        self._tables: dict[tuple[str, str], dict[tuple[str, str], tuple[Obj, bytes]]] = {}
        self._by_id: dict[tuple[str, str], dict[int, tuple[Obj, bytes]]] = {}
        """The same entries by ``id`` of their object: a list finds its items' bytes without a key per item."""

    def _table(self, resource: Resource) -> dict[tuple[str, str], tuple[Obj, bytes]]:
        served_as = (resource.api_version, resource.kind)
        table = self._tables.get(served_as)
        if table is None:
            table = self._tables[served_as] = {}
            self._by_id[served_as] = {}
        return table

    def get(self, resource: Resource, obj: Obj) -> bytes:
        return self.many(resource, (obj,))[0]

    def many(self, resource: Resource, objects: Iterable[Obj]) -> list[bytes]:
        objects = objects if isinstance(objects, list) else list(objects)
        by_id = self._by_id.get((resource.api_version, resource.kind))
        if by_id is not None:
            # An entry holds its object, so an id found is the object's own: no name to build, no identity test.
            get = by_id.get
            try:
                return [get(id(obj))[1] for obj in objects]  # type: ignore[index]
            except TypeError:  # a miss (None): some object is new or of a newer version
                pass
        return [self._one(resource, obj) for obj in objects]

    def _one(self, resource: Resource, obj: Obj) -> bytes:
        table = self._table(resource)
        by_id = self._by_id[(resource.api_version, resource.kind)]
        meta = obj["metadata"]
        key = (meta.get("namespace") or "", meta.get("name") or "")
        entry = table.get(key)
        if entry is not None and entry[0] is obj:
            return entry[1]
        entry = (obj, dumps(encode(served(resource, obj), resource.served_key)))
        old = table.pop(key, None)  # re-inserted at the end: the order is that of the latest write
        if old is None and len(table) >= self.size:
            old = table.pop(next(iter(table)))
        if old is not None:
            del by_id[id(old[0])]
        table[key] = by_id[id(obj)] = entry
        return entry[1]


_CACHE = _WireCache()


def served(resource: Resource, obj: Obj) -> Obj:
    """A stored object in its resource's shape (an ``events.k8s.io`` Event from its stored ``v1`` form)."""
    if resource.stored_as is not None:
        return event_shapes.to_served(obj)
    return {**obj, "kind": resource.kind, "apiVersion": resource.api_version}


def wire_object(resource: Resource, obj: Obj) -> Obj:
    """The wire form of an object, as JSON values (a fresh copy: for a Table's rows)."""
    return encode(served(resource, obj), resource.served_key)


def wire_bytes(resource: Resource, obj: Obj, *, stored: bool = True) -> bytes:
    """The wire form of an object as JSON bytes, cached for a stored object. ``stored=False`` for an object the
    store does not hold (a dry run's result carries a stored resourceVersion but other content)."""
    if not stored:
        return dumps(wire_object(resource, obj))
    return _CACHE.get(resource, obj)


def _partial(resource: Resource, obj: Obj, include: str) -> Any:
    if include == "None":
        return None
    if include == "Object":
        return wire_object(resource, obj)
    meta = encode({"metadata": obj["metadata"]}, resource.served_key)["metadata"]
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}


def table(resource: Resource, objects: list[Obj], *, now: float, version: str, rv: str | None,
          include: str = "Metadata", headers: bool = True) -> dict[str, Any]:
    columns, row = columns_for(resource)
    body: dict[str, Any] = {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}", "metadata": {}}
    if rv is not None:
        body["metadata"]["resourceVersion"] = rv
    body["columnDefinitions"] = columns if headers else []
    body["rows"] = [{"cells": row(o, now), "object": _partial(resource, o, include)} for o in objects]
    return body
