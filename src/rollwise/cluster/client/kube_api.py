"""The two ways ``KubeCluster`` reaches the API server, behind one small interface on wire-form dicts:

* ``RestApi``: the direct path (``cluster/client/rest.py``: aiohttp and msgspec, paths from ``RESOURCES``), the
  operator's default;
* ``LightkubeApi``: lightkube 1.0.1's ``AsyncClient`` over httpx (``rollwise run --http-transport httpx`` or
  ``aiohttp``, and the kubectl-like commands).

Both send the same requests (paths, query parameters, bodies, content types) and raise ``rollwise.api.errors``.
Every kind is a lightkube *generic* resource (``create_namespaced_resource``), so objects stay dicts and unknown
fields survive; lightkube's typed class for a GVK is never loaded in this process: ``_create_resource`` returns
whichever class was registered first for a signature (operator-plan §1.1).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx2 as httpx
import msgspec
from lightkube import ApiError, AsyncClient, operators
from lightkube.core.resource_registry import resource_registry
from lightkube.core.selector import build_selector
from lightkube.generic_resource import Generic, create_namespaced_resource
from lightkube.types import PatchType

from rollwise.api import errors
from rollwise.cluster.client.rest import MERGE_PATCH, RestClient, api_path, encode_json, status_error, unreachable
from rollwise.cluster.client.scope import Selector
from rollwise.cluster.resources import GroupKind

__all__ = ["CR_GROUP", "RESOURCES", "Api", "LightkubeApi", "Resource", "RestApi", "to_api_error"]

CR_GROUP = "apps.rollwise.dev"
PAGE = 500


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

    def path(self, namespace: str | None, name: str | None = None, subresource: str | None = None) -> str:
        return api_path(self.group, self.version, self.plural, namespace, name, subresource)


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
        Resource(CR_GROUP, "v1alpha1", "AnalysisTemplate", "analysistemplates"),
        Resource(CR_GROUP, "v1alpha1", "AnalysisRun", "analysisruns"),
    )
}


class Api(Protocol):
    """The verbs on wire-form objects (times as RFC 3339 strings); failures raise ``rollwise.api.errors``."""

    async def get(self, res: Resource, namespace: str, name: str) -> Mapping[str, Any]: ...

    async def list(self, res: Resource, namespace: str | None,
                   labels: Selector | None) -> tuple[list[Mapping[str, Any]], str]: ...

    async def create(self, res: Resource, namespace: str, body: Mapping[str, Any]) -> Mapping[str, Any]: ...

    async def replace(self, res: Resource, namespace: str, name: str, body: Mapping[str, Any], *,
                      status: bool) -> Mapping[str, Any]: ...

    async def patch(self, res: Resource, namespace: str, name: str,
                    merge: Mapping[str, Any]) -> Mapping[str, Any]: ...

    async def delete(self, res: Resource, namespace: str, name: str,
                     options: Mapping[str, Any]) -> Mapping[str, Any]: ...

    def watch(self, res: Resource, namespace: str | None, labels: Selector | None, resource_version: str,
              timeout_seconds: int) -> AsyncIterator[tuple[str, Mapping[str, Any]]]: ...


def selector_params(labels: Selector | None) -> dict[str, Any] | None:
    """A label selector in lightkube's terms (``None``: exists, ``False``: absent, a string: equals)."""
    if not labels:
        return None
    return {k: operators.exists() if v is None else operators.not_exists() if v is False else str(v)
            for k, v in labels.items()}


# -- the direct path ---------------------------------------------------------------------------------------------


class _WatchEvent(msgspec.Struct):
    type: str
    object: dict[str, Any]


_decode_event = msgspec.json.Decoder(_WatchEvent).decode


class RestApi:
    """``Api`` over ``RestClient``."""

    def __init__(self, client: RestClient) -> None:
        self.client = client

    async def get(self, res: Resource, namespace: str, name: str) -> Mapping[str, Any]:
        return await self.client.request("GET", res.path(namespace, name))  # type: ignore[no-any-return]

    async def list(self, res: Resource, namespace: str | None,
                   labels: Selector | None) -> tuple[list[Mapping[str, Any]], str]:
        query = {"limit": str(PAGE)}
        selector = selector_params(labels)
        if selector:
            query["labelSelector"] = build_selector(selector)
        items: list[Mapping[str, Any]] = []
        while True:
            page = await self.client.request("GET", res.path(namespace), query=query)
            items.extend(page.get("items") or ())
            meta = page.get("metadata") or {}
            if not meta.get("continue"):
                return items, str(meta.get("resourceVersion") or "")
            query["continue"] = meta["continue"]

    async def create(self, res: Resource, namespace: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return await self.client.request("POST", res.path(namespace), body=body)  # type: ignore[no-any-return]

    async def replace(self, res: Resource, namespace: str, name: str, body: Mapping[str, Any], *,
                      status: bool) -> Mapping[str, Any]:
        path = res.path(namespace, name, "status" if status else None)
        return await self.client.request("PUT", path, body=body)  # type: ignore[no-any-return]

    async def patch(self, res: Resource, namespace: str, name: str,
                    merge: Mapping[str, Any]) -> Mapping[str, Any]:
        return await self.client.request(  # type: ignore[no-any-return]
            "PATCH", res.path(namespace, name), body=merge, content_type=MERGE_PATCH)

    async def delete(self, res: Resource, namespace: str, name: str,
                     options: Mapping[str, Any]) -> Mapping[str, Any]:
        return await self.client.request("DELETE", res.path(namespace, name), body=options) or {}

    async def watch(self, res: Resource, namespace: str | None, labels: Selector | None, resource_version: str,
                    timeout_seconds: int) -> AsyncIterator[tuple[str, Mapping[str, Any]]]:
        query = {"watch": "true", "timeoutSeconds": str(timeout_seconds)}
        if resource_version:
            query["resourceVersion"] = resource_version
        selector = selector_params(labels)
        if selector:
            query["labelSelector"] = build_selector(selector)
        async for line in self.client.stream_lines(res.path(namespace), query):
            event = _decode_event(line)
            if event.type == "ERROR":
                status = event.object
                raise status_error(int(status.get("code") or 500), str(status.get("reason") or ""),
                                   str(status.get("message") or ""))
            yield event.type, event.object


# -- lightkube over httpx ----------------------------------------------------------------------------------------

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


def to_api_error(err: ApiError | httpx.HTTPError) -> errors.ApiStatusError:
    """The rollwise error for a failed lightkube call (``rest.status_error``'s rule)."""
    if not isinstance(err, ApiError):
        if isinstance(err, httpx.HTTPStatusError):
            return status_error(err.response.status_code, "", err.response.text[:200] or str(err))
        return unreachable(err)
    status = err.status
    return status_error(int(status.code or 500), str(status.reason or ""), str(status.message or ""))


class LightkubeApi:
    """``Api`` over lightkube's ``AsyncClient``. lightkube's ``delete()`` sends no body and drops the reply, so
    deletes go out as raw requests through its httpx client; lightkube's ``list()`` cannot pass resourceVersion;
    every watch passes ``server_timeout`` (lightkube disables the read timeout on watches)."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self._api: Any = client  # lightkube's overloads are written for typed models, not generic classes

    async def get(self, res: Resource, namespace: str, name: str) -> Mapping[str, Any]:
        try:
            return await self._api.get(generic_class(res), name, namespace=namespace)  # type: ignore[no-any-return]
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def list(self, res: Resource, namespace: str | None,
                   labels: Selector | None) -> tuple[list[Mapping[str, Any]], str]:
        it = self._api.list(generic_class(res), namespace=namespace or "*", chunk_size=PAGE,
                            labels=selector_params(labels))
        try:
            items = [o async for o in it]
            return items, it._resourceVersion or ""
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def create(self, res: Resource, namespace: str, body: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            return await self._api.create(  # type: ignore[no-any-return]
                generic_class(res)(body), namespace=namespace)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def replace(self, res: Resource, namespace: str, name: str, body: Mapping[str, Any], *,
                      status: bool) -> Mapping[str, Any]:
        cls = generic_class(res)
        try:
            if status:
                return await self._api.replace(  # type: ignore[no-any-return]
                    cls.Status(body), name, namespace=namespace)
            return await self._api.replace(cls(body), namespace=namespace)  # type: ignore[no-any-return]
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def patch(self, res: Resource, namespace: str, name: str,
                    merge: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            return await self._api.patch(  # type: ignore[no-any-return]
                generic_class(res), name, dict(merge), namespace=namespace, patch_type=PatchType.MERGE)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err

    async def delete(self, res: Resource, namespace: str, name: str,
                     options: Mapping[str, Any]) -> Mapping[str, Any]:
        generic = self._api._client  # lightkube builds the URL and carries auth
        br = generic.prepare_request("delete", res=generic_class(res), name=name, namespace=namespace)
        request = generic._client.build_request("DELETE", br.url, content=encode_json(options),
                                                headers={"Content-Type": "application/json"})
        try:
            response = await generic.send(request)
            generic.raise_for_status(response)
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err
        return response.json() if response.content else {}

    async def watch(self, res: Resource, namespace: str | None, labels: Selector | None, resource_version: str,
                    timeout_seconds: int) -> AsyncIterator[tuple[str, Mapping[str, Any]]]:
        stream = self._api.watch(generic_class(res), namespace=namespace or "*",
                                 resource_version=resource_version or None, server_timeout=timeout_seconds,
                                 labels=selector_params(labels))
        try:
            async for event_type, obj in stream:
                yield event_type, obj
        except (ApiError, httpx.HTTPError) as err:
            raise to_api_error(err) from err
