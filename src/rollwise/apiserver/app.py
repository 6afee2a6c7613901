"""The aiohttp application: authentication, discovery, OpenAPI, and every resource path over ``ApiStore``.

Paths: ``/api/v1/...`` and ``/apis/<group>/<version>/...``, then ``[namespaces/<ns>/]<plural>[/<name>[/<sub>]]``
(subresources ``status``, ``scale``, ``log``); cluster-wide, a namespaced resource is only listed and watched (405).
Trailing slashes are tolerated. Failures are ``Status`` bodies whose HTTP code equals ``code``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from aiohttp import web

from rollwise.api.errors import (
    ApiStatusError,
    BadRequest,
    Conflict,
    Forbidden,
    InternalError,
    NotFound,
    ServerTimeout,
)
from rollwise.apiserver.admission.field_validation import fields_checked, warning_header
from rollwise.apiserver.auth import authz, reviews
from rollwise.apiserver.auth.tokens import add_token_route
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.serving import discovery as disc
from rollwise.apiserver.serving.config import ServerConfig
from rollwise.apiserver.serving.connect import CONNECT_SUBRESOURCES, connect
from rollwise.apiserver.serving.debug import add_debug_routes
from rollwise.apiserver.serving.eviction import add_eviction_route
from rollwise.apiserver.serving.http import (
    bool_flag,
    json_reply,
    list_reply,
    object_reply,
    ok_reply,
    read_body,
    table,
    wants_table,
    wire_bytes,
)
from rollwise.apiserver.serving.list_options import list_options
from rollwise.apiserver.serving.middleware import GROUPS, USER, auth_middleware, errors_middleware
from rollwise.apiserver.serving.requests import decoded, delete_options, dry_run_of, patch_plain, pod_log, scale_wire
from rollwise.apiserver.serving.status import resource_error_status, success_status
from rollwise.apiserver.serving.watching import stream_watch
from rollwise.apiserver.storage.ownership import default_manager
from rollwise.apiserver.storage.store import PATCH_TYPES, ApiStore

__all__ = ["USER", "make_app"]

log = logging.getLogger("rollwise.apiserver")

_BODY_NAME = web.RequestKey("body-name", str)
_WARNINGS = web.RequestKey("warnings", list[str])
_WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True, slots=True)
class _Target:
    resource: Resource
    namespace: str | None
    name: str | None
    sub: str


def make_app(store: ApiStore, config: ServerConfig | None = None) -> web.Application:
    """The API server over ``store`` as aiohttp serves it (``rollwise up``, and tests on aiohttp's TestServer).

    ``config`` (``serving/config.py``) says how requests authenticate and what is on: RBAC, the token endpoint,
    bookmarks, the audit sink, injected faults, the debug endpoints. The routes are kube-apiserver's: version and
    health, discovery and OpenAPI, the eviction and token subresources, then every resource path (module docstring);
    the middlewares authenticate each request and turn every failure into a ``Status`` body."""
    cfg = config or ServerConfig()
    app = web.Application(middlewares=[errors_middleware, auth_middleware(cfg)], client_max_size=64 * 2**20)
    api = _Api(store, cfg)
    r = app.router
    for path in ("/version", "/version/"):
        r.add_get(path, disc.version_handler(store.versioning.release))
    for path in ("/healthz", "/readyz", "/livez"):
        r.add_get(path, ok_reply)
    for path in ("/api", "/api/"):
        r.add_get(path, api.core_root)
    for path in ("/apis", "/apis/"):
        r.add_get(path, api.groups_root)
    r.add_get("/openapi/v3", api.openapi_root)
    r.add_get("/openapi/v2", disc.openapi_v2_handler(store.registry))
    r.add_get("/openapi/v3/{path:.*}", api.openapi_gv)
    add_eviction_route(r, store, api)  # before the generic routes, which know no pods/eviction
    add_token_route(r, store, cfg, api)  # nor serviceaccounts/token (served when the config has a signer)
    r.add_route("*", "/api/{version}", api.core_version)
    r.add_route("*", "/api/{version}/", api.core_version)
    r.add_route("*", "/api/{version}/{tail:.*}", api.resource)
    r.add_route("*", "/apis/{group}", api.group)
    r.add_route("*", "/apis/{group}/", api.group)
    r.add_route("*", "/apis/{group}/{version}", api.group_version)
    r.add_route("*", "/apis/{group}/{version}/", api.group_version)
    r.add_route("*", "/apis/{group}/{version}/{tail:.*}", api.resource)
    if cfg.debug_endpoints:
        add_debug_routes(r, store, cfg, api)
    return app


def _manager(request: web.Request) -> str:
    """The field manager of a write: the request's ``fieldManager``, else from its User-Agent (ownership.py)."""
    return request.query.get("fieldManager") or default_manager(request.headers.get("User-Agent", ""))


class _Api:
    def __init__(self, store: ApiStore, cfg: ServerConfig) -> None:
        self.store = store
        self.cfg = cfg

    # -- discovery and OpenAPI -------------------------------------------------------------------------------

    def _root(self, request: web.Request, *, core: bool, legacy: Callable[[], dict[str, Any]]) -> web.Response:
        """A discovery root: the aggregated document when the client asks for it, else the legacy one."""
        if disc.wants_aggregated(request.headers.get("Accept", "")):
            resp = json_reply(disc.aggregated(self.store.registry, core=core))
            resp.headers["Content-Type"] = disc.AGGREGATED_CONTENT_TYPE
            return resp
        return json_reply(legacy())

    async def core_root(self, request: web.Request) -> web.Response:
        return self._root(request, core=True, legacy=lambda: disc.api_versions(self.cfg.server_address))

    async def groups_root(self, request: web.Request) -> web.Response:
        return self._root(request, core=False, legacy=lambda: disc.api_group_list(self.store.registry))

    async def core_version(self, request: web.Request) -> web.Response:
        doc = disc.api_resource_list(self.store.registry, "", request.match_info["version"])
        if doc is None or request.method != "GET":
            raise NotFound("the server could not find the requested resource")
        return json_reply(doc)

    async def group(self, request: web.Request) -> web.Response:
        doc = disc.api_group(self.store.registry, request.match_info["group"])
        if doc is None or request.method != "GET":
            raise NotFound("the server could not find the requested resource")
        return json_reply(doc)

    async def group_version(self, request: web.Request) -> web.Response:
        doc = disc.api_resource_list(self.store.registry, request.match_info["group"], request.match_info["version"])
        if doc is None or request.method != "GET":
            raise NotFound("the server could not find the requested resource")
        return json_reply(doc)

    async def openapi_root(self, _request: web.Request) -> web.Response:
        return json_reply(disc.openapi_root(self.store.registry))

    async def openapi_gv(self, request: web.Request) -> web.Response:
        parts = request.match_info["path"].strip("/").split("/")
        doc = None
        if len(parts) == 2 and parts[0] == "api":
            doc = disc.openapi_group_version(self.store.registry, "", parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            doc = disc.openapi_group_version(self.store.registry, parts[1], parts[2])
        if doc is None and parts == [""]:
            return await self.openapi_root(request)  # /openapi/v3/
        if doc is None:
            raise NotFound("the server could not find the requested resource")
        return json_reply(doc)

    # -- the guard of a write outside the resource paths (apiserver/serving/debug.py) ---------------------------------

    def authorize_write(self, request: web.Request, resource: Resource, namespace: str, name: str,
                        sub: str) -> None:
        self._authorize(request, _Target(resource, namespace, name, sub))

    def audit_write(self, request: web.Request, resource: Resource, namespace: str, name: str, sub: str, obj: Any,
                    code: int) -> None:
        self._audit(request, _Target(resource, namespace, name, sub), "create", obj, code)

    # -- resources -------------------------------------------------------------------------------------------

    def _target(self, request: web.Request) -> _Target:
        group = request.match_info.get("group", "")
        version = request.match_info["version"]
        segs = [s for s in request.match_info["tail"].split("/") if s]
        namespace = None
        if len(segs) >= 3 and segs[0] == "namespaces" and segs[2] not in ("status", "finalize"):
            namespace, segs = segs[1], segs[2:]
        if not segs or len(segs) > 3:
            raise NotFound("the server could not find the requested resource")
        resource = self.store.registry.find(group, version, segs[0])
        if resource is None:
            raise NotFound("the server could not find the requested resource")
        name = segs[1] if len(segs) > 1 else None
        sub = segs[2] if len(segs) > 2 else ""
        if sub and not ((sub == "status" and resource.status) or (sub == "scale" and resource.scale)
                        or sub in resource.connect):
            raise NotFound("the server could not find the requested resource")
        if namespace is not None and not resource.namespaced:
            raise NotFound("the server could not find the requested resource")
        if resource.namespaced and name is not None and namespace is None:
            raise NotFound("the server could not find the requested resource")
        return _Target(resource, namespace, name, sub)

    async def resource(self, request: web.Request) -> web.StreamResponse:
        t = self._target(request)
        self.store.warnings = []  # the store's handlers are synchronous: what it keeps now is this request's
        try:
            self._authorize(request, t)
            resp = await self._resource(request, t)
        except ApiStatusError as err:
            name = t.name or str(request.get(_BODY_NAME, ""))
            return json_reply(resource_error_status(err, t.resource, name), err.code)
        if self.store.warnings:  # the policies' Warn bindings (store.py)
            request[_WARNINGS] = [*request.get(_WARNINGS, ()), *self.store.warnings]
            self.store.warnings = []
        if not resp.prepared:
            for text in request.get(_WARNINGS, ()):
                resp.headers.add("Warning", warning_header(text))
        return resp

    def _checked(self, request: web.Request, t: _Target, body: Any, patch_type: str | None = None) -> Any:
        """The body after the request's ``fieldValidation`` (``field_validation``); warnings kept for the reply."""
        more = self.store.versioning.unknown_fields(t.resource.key, body) if not t.sub else []
        stored = self.store.replaced(t.resource, t.namespace, t.name) if t.name else None
        body, warnings = fields_checked(t.resource, body, request.query, sub=t.sub, patch_type=patch_type,
                                        more_unknown=more, stored=stored)
        request[_WARNINGS] = warnings
        return body

    def _proposal_warnings(self, request: web.Request, t: _Target, stored: Any, body: Any) -> None:
        """``up --proposals on``: a warning per use of a seed's proposal the served release does not have, on
        every write of a set that uses one."""
        if not t.sub:
            request[_WARNINGS] = [*request.get(_WARNINGS, ()),
                                  *self.store.versioning.warnings(t.resource.key, stored, body)]

    async def _resource(self, request: web.Request, t: _Target) -> web.StreamResponse:
        method = request.method
        if t.sub in CONNECT_SUBRESOURCES:
            return await connect(request, self.store, self.cfg, t.namespace or "default", t.name or "", t.sub)
        if not t.resource.stored:
            if method != "POST" or t.name is not None:
                raise web.HTTPMethodNotAllowed(method, ["POST"])
            return json_reply(reviews.answer(self.cfg, t.resource, await read_body(request), user=request[USER],
                                             groups=request[GROUPS], namespace=t.namespace), 201)
        if t.resource.namespaced and t.namespace is None and method != "GET":
            raise web.HTTPMethodNotAllowed(method, ["GET"])
        if method in _WRITE_VERBS:
            self._maybe_fail()
        if method == "GET":
            if t.name is None:
                listing = list_options(request.query)
                if listing.watch:
                    return await stream_watch(request, self.store, self.cfg, t.resource, t.namespace, listing)
                return self._list(request, t)
            return self._get(request, t)
        dry_run = dry_run_of(request.query)
        user = request[USER]
        if method == "POST" and t.name is None:
            body = await read_body(request)
            if isinstance(body, dict) and isinstance(body.get("metadata"), dict):
                request[_BODY_NAME] = str(body["metadata"].get("name") or "")
            body = self._checked(request, t, body)
            obj = self.store.create(t.resource, t.namespace, decoded(t.resource, body), actor=user, dry_run=dry_run,
                                    manager=_manager(request))
            self._proposal_warnings(request, t, obj, body)
            self._audit(request, t, "create", obj, 201)
            return object_reply(t.resource, obj, 201, stored=not dry_run)
        if t.name is None and method == "DELETE":
            return await self._delete_collection(request, t, user=user, dry_run=dry_run)
        if t.name is None:
            raise web.HTTPMethodNotAllowed(method, ["GET", "POST", "DELETE"])
        if method == "PUT":
            body = await read_body(request)
            if t.sub == "scale":
                scale = self.store.update_scale(t.resource, t.namespace, t.name, body, actor=user, dry_run=dry_run)
                self._audit(request, t, "update", scale, 200)
                return json_reply(scale_wire(scale))
            body = self._checked(request, t, body)
            obj = self.store.update(t.resource, t.namespace, t.name, decoded(t.resource, body), actor=user,
                                    subresource=t.sub, dry_run=dry_run, manager=_manager(request))
            self._proposal_warnings(request, t, obj, body)
            self._audit(request, t, "update", obj, 200)
            return object_reply(t.resource, obj, stored=not dry_run)
        if method == "PATCH":
            body = await read_body(request)
            if t.sub == "scale":
                current = self.store.scale_of(t.resource, self.store.get(t.resource, t.namespace, t.name))
                kind = PATCH_TYPES.get(request.content_type)
                patched = patch_plain(current, body, kind)
                scale = self.store.update_scale(t.resource, t.namespace, t.name, patched, actor=user,
                                                dry_run=dry_run)
                self._audit(request, t, "patch", scale, 200)
                return json_reply(scale_wire(scale))
            body = self._checked(request, t, body, PATCH_TYPES.get(request.content_type))
            if PATCH_TYPES.get(request.content_type) == "apply" and not request.query.get("fieldManager"):
                raise BadRequest("PATCH, fieldManager is required for apply requests")
            obj, created = self.store.patch(t.resource, t.namespace, t.name, request.content_type,
                                            decoded(t.resource, body), actor=user, subresource=t.sub,
                                            dry_run=dry_run, manager=_manager(request),
                                            force=bool_flag(request.query.get("force")))
            self._proposal_warnings(request, t, obj, body)
            self._audit(request, t, "patch", obj, 201 if created else 200)
            return object_reply(t.resource, obj, 201 if created else 200, stored=not dry_run)
        if method == "DELETE":
            options = delete_options(await read_body(request), request.query)
            obj, gone = self.store.delete(t.resource, t.namespace, t.name, options, actor=user, dry_run=dry_run)
            self._audit(request, t, "delete", obj, 200)
            if gone and t.resource.kind in ("Namespace",):
                return json_reply(success_status(kind=t.resource.plural, group=t.resource.group, name=t.name,
                                                 uid=str(obj["metadata"].get("uid", ""))))
            return object_reply(t.resource, obj, stored=not dry_run)
        raise web.HTTPMethodNotAllowed(method, ["GET", "POST", "PUT", "PATCH", "DELETE"])

    async def _delete_collection(self, request: web.Request, t: _Target, *, user: str,
                                 dry_run: bool) -> web.Response:
        """DELETE on a collection: every object the selectors match, each as a single DELETE would."""
        options = delete_options(await read_body(request), request.query)
        objs = self.store.list(t.resource, t.namespace, label_selector=request.query.get("labelSelector"),
                               field_selector=request.query.get("fieldSelector"))
        items = []
        for obj in objs:
            meta = obj["metadata"]
            try:
                last, _ = self.store.delete(t.resource, meta.get("namespace") or None, meta["name"], options,
                                            actor=user, dry_run=dry_run)
            except NotFound:
                continue  # gone meanwhile (a garbage-collected dependent)
            self._audit(request, t, "delete", last, 200)
            items.append(msgspec.Raw(wire_bytes(t.resource, last, stored=not dry_run)))
        return json_reply({"kind": f"{t.resource.kind}List", "apiVersion": t.resource.api_version,
                           "metadata": {"resourceVersion": str(self.store.resource_version)}, "items": items})

    def _authorize(self, request: web.Request, t: _Target) -> None:
        if self.cfg.authorizer is None:
            return
        req = authz.Request(user=request[USER], verb=authz.verb_of(request.method, named=t.name is not None,
                                                                    watch=bool_flag(request.query.get("watch"))),
                            group=t.resource.group, resource=t.resource.plural, subresource=t.sub,
                            namespace=t.namespace, name=t.name, groups=request[GROUPS])
        if not self.cfg.authorizer.allowed(req):
            self._audit(request, t, req.verb, {}, 403)
            raise Forbidden(authz.forbidden_message(req))

    def _maybe_fail(self) -> None:
        f = self.cfg.faults
        if f.conflict_rate and f.rng.random() < f.conflict_rate:
            raise Conflict("injected conflict: the object has been modified; please apply your changes to the "
                           "latest version and try again")
        if f.error_rate and f.rng.random() < f.error_rate:
            raise InternalError("injected internal error")
        if f.timeout_rate and f.rng.random() < f.timeout_rate:
            raise ServerTimeout("injected timeout: the server was unable to return a response in the time allotted, "
                                "but may still be processing the request")

    def _audit(self, request: web.Request, t: _Target, verb: str, obj: Any, code: int) -> None:
        if self.cfg.audit is None or request.query.get("dryRun") == "All":
            return
        meta = obj.get("metadata") or {}
        self.cfg.audit({"time": time.time(), "user": request[USER], "verb": verb,
                        "resource": t.resource.group_resource + (f"/{t.sub}" if t.sub else ""),
                        "namespace": t.namespace or "", "name": meta.get("name") or t.name or "",
                        "resourceVersion": meta.get("resourceVersion", ""), "code": code})

    def _get(self, request: web.Request, t: _Target) -> web.StreamResponse:
        assert t.name is not None
        obj = self.store.get(t.resource, t.namespace, t.name)
        if t.sub == "scale":
            return json_reply(scale_wire(self.store.scale_of(t.resource, obj)))
        if t.sub == "log":
            return web.Response(text=pod_log(obj, request.query.get("container"),
                                             previous=bool_flag(request.query.get("previous"))),
                                content_type="text/plain")
        version = wants_table(request.headers.get("Accept", ""))
        if version and not t.sub:
            return json_reply(table(t.resource, [obj], now=self.store.clock(), version=version, rv=None,
                                    include=request.query.get("includeObject", "Metadata")))
        return object_reply(t.resource, obj)

    def _list(self, request: web.Request, t: _Target) -> web.Response:
        self.store.feed.pump()
        objs = self.store.list(t.resource, t.namespace, label_selector=request.query.get("labelSelector"),
                               field_selector=request.query.get("fieldSelector"))
        rv = str(self.store.resource_version)
        version = wants_table(request.headers.get("Accept", ""))
        if version:
            return json_reply(table(t.resource, objs, now=self.store.clock(), version=version, rv=rv,
                                    include=request.query.get("includeObject", "Metadata")))
        return list_reply(t.resource, objs, rv)


