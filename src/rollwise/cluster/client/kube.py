"""The real Kubernetes API, with objects as plain dicts: the ``Cluster`` verbs and the informers' list/watch.

Requests go one of two ways (``cluster/client/kube_api.py``): straight over aiohttp (``RestClient``, the operator's
default) or through lightkube 1.0.1's ``AsyncClient`` over httpx. Either way (operator-plan §1.2):

* errors become ``rollwise.api.errors`` (NotFound, AlreadyExists, Conflict, Gone, Invalid; any other status
  keeps its HTTP code and reason); a connection failure is a 503 ServiceUnavailable;
* deletes carry a ``DeleteOptions`` body, so a pod delete can carry a UID precondition and the reply (the
  terminating pod, with its resourceVersion) reaches the consistency store;
* every watch passes ``timeoutSeconds``: a half-dead connection would otherwise hang for ever; 410 (as a status
  or an ERROR event) surfaces as ``Gone`` so the informer relists itself, never re-watching without a version
  (which would leave ghost objects).

Times cross this edge through ``cluster.wire``: every object read is decoded (RFC 3339 → float seconds since the
epoch) and every object written is encoded, so the controllers never see a wire string.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal, cast

from lightkube import AsyncClient

from rollwise.api import errors
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.client.kube_api import CR_GROUP, RESOURCES, Api, LightkubeApi, Resource, RestApi, to_api_error
from rollwise.cluster.client.listwatch import ListResult, WatchEvent
from rollwise.cluster.client.rest import RestClient
from rollwise.cluster.client.scope import Selector
from rollwise.cluster.resources import GroupKind, ResourceRef
from rollwise.cluster.wire import decode, encode

__all__ = ["CR_GROUP", "RESOURCES", "KubeCluster", "KubeListWatch", "Resource", "to_api_error"]

EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]


def _group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


class KubeCluster:
    """The ``Cluster`` verbs, async, against a real API server, over ``client`` (a ``RestClient``, or lightkube's
    ``AsyncClient``). ``StatefulSet`` without a group means the kind named by ``set_group`` (the CR by default;
    ``"apps"`` for the companion controller)."""

    def __init__(self, client: RestClient | AsyncClient, *, set_group: str = CR_GROUP) -> None:
        self.client = client
        self.api: Api = RestApi(client) if isinstance(client, RestClient) else LightkubeApi(client)
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

    def _for(self, obj: Mapping[str, Any]) -> Resource:
        return self.resource(str(obj.get("kind")), api_version=obj.get("apiVersion"))

    # -- verbs -----------------------------------------------------------------------------------------------

    async def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        res = self.resource(kind)
        return _read(await self.api.get(res, namespace, name), res)

    async def list(self, kind: ResourceRef, namespace: str | None = None, *,
                   labels: Selector | None = None) -> tuple[list[Obj], str]:
        """Every object (all pages) matching ``labels``, and the list's resourceVersion (a consistent read)."""
        res = self.resource(kind)
        items, rv = await self.api.list(res, namespace, labels)
        return [_read(o, res) for o in items], rv

    async def create(self, obj: Obj) -> Obj:
        res = self._for(obj)
        return _read(await self.api.create(res, namespace_of(obj), _write(obj, res)), res)

    async def update(self, obj: Obj) -> Obj:
        res = self._for(obj)
        return _read(await self.api.replace(res, namespace_of(obj), name_of(obj), _write(obj, res), status=False),
                     res)

    async def update_status(self, obj: Obj) -> Obj:
        """PUT to the status subresource; ``metadata.resourceVersion`` makes a stale write a Conflict."""
        res = self._for(obj)
        return _read(await self.api.replace(res, namespace_of(obj), name_of(obj), _write(obj, res), status=True),
                     res)

    async def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any]) -> Obj:
        """A JSON merge patch."""
        res = self.resource(kind)
        body = encode(dict(merge), res.group_kind)  # a merge patch carries times at the same paths
        return _read(await self.api.patch(res, namespace, name, body), res)

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
        reply = await self.api.delete(res, namespace, name, body)
        return None if reply.get("kind") == "Status" else _read(reply, res)

    # -- watches ---------------------------------------------------------------------------------------------

    def list_watch(self, kind: str, namespace: str | None = None, *,
                   labels: Selector | None = None) -> KubeListWatch:
        return KubeListWatch(self, kind, namespace, labels)

    async def close(self) -> None:
        await self.client.close()


def _with_kind(obj: Mapping[str, Any], res: Resource) -> Obj:
    return {**obj, "apiVersion": obj.get("apiVersion") or res.api_version, "kind": obj.get("kind") or res.kind}


def _read(obj: Mapping[str, Any], res: Resource) -> Obj:
    """An object from the server, in rollwise's form: typed by its resource, times as float seconds."""
    return decode(_with_kind(obj, res), res.group_kind)


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
        # Every list is a consistent read (lightkube's list() cannot pass resourceVersion, and both paths send
        # the same requests): never older than what was already seen, at the cost of a quorum read where "0"
        # would have hit the watch cache.
        items, rv = await self.cluster.list(self.kind, self.namespace, labels=self.labels)
        return ListResult(items=items, resource_version=rv)

    async def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        res = self.cluster.resource(self.kind)
        async for event_type, obj in self.cluster.api.watch(res, self.namespace, self.labels, resource_version,
                                                            timeout_seconds):
            yield WatchEvent(type=cast(EventType, event_type), obj=_read(obj, res))
