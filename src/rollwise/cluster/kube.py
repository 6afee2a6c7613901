"""The real Kubernetes API through lightkube 1.0.1's ``AsyncClient``, with objects as plain dicts.

Every kind is a lightkube *generic* resource (``create_namespaced_resource``), so objects stay
``rollwise.api.meta.Obj`` dicts end to end and unknown fields survive. lightkube's typed class for a GVK is never
loaded in this process: ``_create_resource`` returns whichever class was registered first for a signature
(operator-plan §1.1).

What lightkube does not do, done here (operator-plan §1.2):

* errors become ``rollwise.api.errors`` (NotFound, AlreadyExists, Conflict, Gone, Invalid; any other status
  keeps its HTTP code and reason); a connection failure is a 503 ServiceUnavailable;
* deletes go out as raw requests with a ``DeleteOptions`` body, so a pod delete can carry a UID precondition and
  the reply (the terminating pod, with its resourceVersion) reaches the consistency store; lightkube's
  ``delete()`` sends no body and drops the reply;
* every watch passes ``server_timeout``: lightkube disables the read timeout on watches, and a half-dead
  connection would otherwise hang for ever; 410 (as a status or an ERROR event) surfaces as ``Gone`` so the
  informer relists itself — never lightkube's ``on_error_retry``, which re-watches without a version and leaves
  ghost objects.

Times cross this edge through ``cluster.wire``: every object read is decoded (RFC 3339 → float seconds since the
epoch) and every object written is encoded, so the controllers never see a wire string.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import httpx2 as httpx
from lightkube import ApiError, AsyncClient, operators
from lightkube.core.resource_registry import resource_registry
from lightkube.generic_resource import Generic, create_namespaced_resource
from lightkube.types import PatchType

from rollwise.api import errors
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.listwatch import ListResult, WatchEvent
from rollwise.cluster.resources import GroupKind, ResourceRef
from rollwise.cluster.scope import Selector
from rollwise.cluster.wire import decode, encode

__all__ = ["CR_GROUP", "RESOURCES", "KubeCluster", "KubeListWatch", "Resource", "to_api_error"]

CR_GROUP = "apps.rollwise.dev"
EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]


@dataclass(frozen=True, slots=True)
class Resource:
    group: str
    version: str
    kind: str
    plural: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_kind(self) -> GroupKind:
        return GroupKind(self.group, self.kind)


RESOURCES: dict[tuple[str, str], Resource] = {
    (r.group, r.kind): r for r in (
        Resource("", "v1", "Pod", "pods"),
        Resource("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
        Resource("", "v1", "Event", "events"),
        Resource("apps", "v1", "ControllerRevision", "controllerrevisions"),
        Resource("apps", "v1", "StatefulSet", "statefulsets"),
        Resource("coordination.k8s.io", "v1", "Lease", "leases"),
        Resource("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets"),
        Resource(CR_GROUP, "v1alpha1", "StatefulSet", "statefulsets"),
    )
}


_CLASSES: dict[Resource, Any] = {}


def generic_class(res: Resource) -> Any:
    """lightkube's generic class for ``res``, made once per process (lightkube refuses a second registration)."""
    if res not in _CLASSES:
        try:
            _CLASSES[res] = create_namespaced_resource(res.group, res.version, res.kind, res.plural)
        except ValueError:
            # Registered already by other code in this process: usable only if it is generic too.
            found = resource_registry.get(res.api_version, res.kind)
            if found is None or not issubclass(found, Generic):
                raise RuntimeError(f"lightkube already holds a typed class for {res.api_version} {res.kind}; "
                                   "rollwise needs the generic one (load no typed model for it)") from None
            _CLASSES[res] = found
    return _CLASSES[res]


def _group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def to_api_error(err: ApiError | httpx.HTTPError) -> errors.ApiStatusError:
    """The rollwise error for a failed call: by HTTP code, and by reason where one code means two things."""
    if not isinstance(err, ApiError):
        if isinstance(err, httpx.HTTPStatusError):
            return _status_error(err.response.status_code, "", err.response.text[:200] or str(err))
        return _status_error(503, "ServiceUnavailable", f"cannot reach the API server: {err}")
    status = err.status
    return _status_error(int(status.code or 500), str(status.reason or ""), str(status.message or ""))


def _status_error(code: int, reason: str, message: str) -> errors.ApiStatusError:
    if code == 404:
        return errors.NotFound(message)
    if code == 409:
        return errors.AlreadyExists(message) if reason == "AlreadyExists" else errors.Conflict(message)
    if code == 410:
        return errors.Gone(message)
    if code == 422:
        return errors.Invalid(message)
    out = errors.ApiStatusError(message)
    out.code = code
    out.reason = reason or {403: "Forbidden", 429: "TooManyRequests", 503: "ServiceUnavailable"}.get(
        code, "InternalError")
    return out


class KubeCluster:
    """The ``Cluster`` verbs, async, against a real API server. ``StatefulSet`` without a group means the kind
    named by ``set_group`` (the CR by default; ``"apps"`` for the companion controller)."""

    def __init__(self, client: AsyncClient, *, set_group: str = CR_GROUP) -> None:
        self.client = client
        self._api: Any = client  # lightkube's overloads are written for typed models, not generic classes
        self.set_group = set_group

    # -- resources -------------------------------------------------------------------------------------------

    def resource(self, ref: ResourceRef, *, api_version: str | None = None) -> Resource:
        """The row for a reference: a ``GroupKind``, ``"Kind.group"``, or a bare kind (``StatefulSet`` is the
        ``set_group`` one); ``api_version`` names the group outright."""
        if isinstance(ref, GroupKind):
            group, kind = ref.group, ref.kind
        else:
            kind, dot, named = ref.partition(".")
            group = named if dot else self._default_group(kind)
        if api_version is not None:
            group = _group_of(api_version)
        try:
            return RESOURCES[(group, kind)]
        except KeyError:
            raise errors.NotFound(f"no resource {kind} in group {group!r}") from None

    def _default_group(self, kind: str) -> str:
        if kind == "StatefulSet":
            return self.set_group
        return next(g for (g, k) in RESOURCES if k == kind) if any(k == kind for _, k in RESOURCES) else ""

    def cls(self, res: Resource) -> Any:
        return generic_class(res)

    def _for(self, obj: Mapping[str, Any]) -> tuple[Resource, Any]:
        res = self.resource(str(obj.get("kind")), api_version=obj.get("apiVersion"))
        return res, self.cls(res)

    # -- verbs -----------------------------------------------------------------------------------------------

    async def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        res = self.resource(kind)
        try:
            return _read(await self._api.get(self.cls(res), name, namespace=namespace), res)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def list(self, kind: ResourceRef, namespace: str | None = None, *,
                   labels: Selector | None = None) -> tuple[list[Obj], str]:
        """Every object (all pages) matching ``labels``, and the list's resourceVersion (a consistent read)."""
        res = self.resource(kind)
        it = self._api.list(self.cls(res), namespace=namespace or "*", chunk_size=500, labels=_labels(labels))
        try:
            items = [_read(o, res) async for o in it]
            rv = it._resourceVersion or ""
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err
        return items, rv

    async def create(self, obj: Obj) -> Obj:
        res, cls = self._for(obj)
        try:
            return _read(await self._api.create(cls(_write(obj, res)), namespace=namespace_of(obj)), res)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def update(self, obj: Obj) -> Obj:
        res, cls = self._for(obj)
        try:
            return _read(await self._api.replace(cls(_write(obj, res)), namespace=namespace_of(obj)), res)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def update_status(self, obj: Obj) -> Obj:
        """PUT to the status subresource; ``metadata.resourceVersion`` makes a stale write a Conflict."""
        res, cls = self._for(obj)
        try:
            return _read(await self._api.replace(cls.Status(_write(obj, res)), name_of(obj),
                                                 namespace=namespace_of(obj)), res)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj:
        res = self.resource(kind)
        body = encode(dict(merge), res.group_kind)  # a merge patch carries times at the same paths
        try:
            return _read(await self._api.patch(self.cls(res), name, body, namespace=namespace,
                                               patch_type=PatchType.MERGE), res)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def delete(self, kind: ResourceRef, namespace: str, name: str, *, uid: str | None = None,
                     resource_version: str | None = None, grace_period_seconds: int | None = None,
                     propagation: str | None = None) -> Obj | None:
        """DELETE with a ``DeleteOptions`` body. Returns the object if it remains (terminating), None if the
        server answered with a Status (gone). A failed UID or resourceVersion precondition is a Conflict."""
        res = self.resource(kind)
        body: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        preconditions = {k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v}
        if preconditions:
            body["preconditions"] = preconditions
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        if propagation is not None:
            body["propagationPolicy"] = propagation
        generic = self._api._client  # lightkube builds the URL and carries auth; its delete() sends no body
        br = generic.prepare_request("delete", res=self.cls(res), name=name, namespace=namespace)
        request = generic._client.build_request("DELETE", br.url, content=json.dumps(body).encode(),
                                                headers={"Content-Type": "application/json"})
        try:
            response = await generic.send(request)
            generic.raise_for_status(response)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err
        reply = response.json() if response.content else {}
        return None if reply.get("kind") == "Status" else _read(reply, res)

    # -- watches ---------------------------------------------------------------------------------------------

    def list_watch(self, kind: str, namespace: str | None = None, *,
                   labels: Selector | None = None) -> KubeListWatch:
        return KubeListWatch(self, kind, namespace, labels)


def _labels(selector: Selector | None) -> dict[str, Any] | None:
    """A label selector in lightkube's terms (``None``: exists, ``False``: absent, a string: equals)."""
    if not selector:
        return None
    return {k: operators.exists() if v is None else operators.not_exists() if v is False else str(v)
            for k, v in selector.items()}


def _with_kind(obj: Mapping[str, Any], res: Resource) -> Obj:
    return {**obj, "apiVersion": obj.get("apiVersion") or res.api_version, "kind": obj.get("kind") or res.kind}


def _read(obj: Mapping[str, Any], res: Resource) -> Obj:
    """An object from the server, in rollwise's form: typed by its resource, times as float seconds."""
    return decode(_with_kind(dict(obj), res), res.group_kind)


def _write(obj: Mapping[str, Any], res: Resource) -> Obj:
    return encode(_with_kind(obj, res), res.group_kind)


class KubeListWatch:
    """``ListWatchSource`` over the API server, for the runtime's informers."""

    def __init__(self, cluster: KubeCluster, kind: str, namespace: str | None,
                 labels: Selector | None = None) -> None:
        self.cluster = cluster
        self.kind = kind
        self.namespace = namespace
        self.labels = labels

    async def list(self, *, resource_version: str) -> ListResult:
        # lightkube's list() cannot pass resourceVersion, so every list is a consistent read: never older than
        # what was already seen, at the cost of a quorum read where "0" would have hit the watch cache.
        items, rv = await self.cluster.list(self.kind, self.namespace, labels=self.labels)
        return ListResult(items=items, resource_version=rv)

    async def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        res = self.cluster.resource(self.kind)
        stream = self.cluster._api.watch(self.cluster.cls(res), namespace=self.namespace or "*",
                                           resource_version=resource_version or None,
                                           server_timeout=timeout_seconds, labels=_labels(self.labels))
        try:
            async for event_type, obj in stream:
                yield WatchEvent(type=cast(EventType, event_type), obj=_read(obj, res))
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err
