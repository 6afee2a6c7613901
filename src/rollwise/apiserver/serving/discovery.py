"""Discovery documents (legacy and aggregated v2) and the OpenAPI v3 stub, from the resource table.

Shapes from ``shared/reference/kubectl-wire.md`` §4.2 to 4.3. The aggregated form is served only when the Accept
header asks for ``v=v2`` (kubectl 1.32 does; older clients get the legacy documents they ask for). The OpenAPI
stub declares, per kind, a PATCH operation with ``x-kubernetes-group-version-kind`` and a ``fieldValidation``
parameter: kubectl then leaves field validation to the server. Strategic merge patch is left out of the request
content types, so kubectl uses its compiled-in SMP for built-ins and merge patch for custom resources. Every
group-version URL carries a content hash, because kubectl caches hashed OpenAPI URLs as immutable.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from aiohttp import web

from rollwise.api.versions import KubeRelease
from rollwise.apiserver.kinds.openapi_models import kind_schemas, model_for
from rollwise.apiserver.kinds.resources import Registry, Resource
from rollwise.apiserver.serving.http import json_reply, status_reply

__all__ = [
    "AGGREGATED_CONTENT_TYPE",
    "VERSION_INFO",
    "aggregated",
    "api_group",
    "api_group_list",
    "api_resource_list",
    "api_versions",
    "openapi_group_version",
    "openapi_root",
    "version_handler",
    "wants_aggregated",
]

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
VERSION_INFO = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-rollwise", "gitCommit": "", "gitTreeState": "clean",
                "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23", "compiler": "gc", "platform": "linux/amd64"}
_SUB_VERBS = ["get", "patch", "update"]
_CONNECT_VERBS = {"log": ["get"], "exec": ["create", "get"], "attach": ["create", "get"],
                  "portforward": ["create", "get"]}
_CONNECT_KINDS = {"exec": "PodExecOptions", "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions"}


def wants_aggregated(accept: str) -> bool:
    """True when an Accept entry asks for ``g=apidiscovery.k8s.io;v=v2`` (v2beta1 alone gets legacy documents)."""
    for part in accept.split(","):
        params = {p.strip() for p in part.split(";")}
        if "g=apidiscovery.k8s.io" in params and "v=v2" in params:
            return True
    return False


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _group_entry(name: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group_entry(g, vs) for g, vs in registry.group_versions().items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    versions = registry.group_versions().get(group)
    if not versions or not group:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}


def _legacy_entries(r: Resource) -> list[dict[str, Any]]:
    main: dict[str, Any] = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind,
                            "verbs": list(r.verbs)}
    if r.short_names:
        main["shortNames"] = list(r.short_names)
    if r.categories:
        main["categories"] = list(r.categories)
    out = [main]
    if r.status:
        out.append({"name": f"{r.plural}/status", "singularName": "", "namespaced": r.namespaced, "kind": r.kind,
                    "verbs": _SUB_VERBS})
    if r.scale:
        out.append({"name": f"{r.plural}/scale", "singularName": "", "namespaced": r.namespaced,
                    "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": _SUB_VERBS})
    for sub in r.connect:
        out.append({"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                    "kind": _CONNECT_KINDS.get(sub, r.kind), "verbs": _CONNECT_VERBS.get(sub, ["get"])})
    return out


def api_resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    resources = [r for r in registry if r.group == group and r.version == version]
    if not resources:
        return None
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
            "resources": [e for r in resources for e in _legacy_entries(r)]}


def _aggregated_resource(r: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "resource": r.plural, "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster", "singularResource": r.singular,
        "verbs": list(r.verbs)}
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    subs = []
    if r.status:
        subs.append({"subresource": "status", "responseKind": {"group": r.group, "version": r.version,
                                                                "kind": r.kind}, "verbs": _SUB_VERBS})
    if r.scale:
        subs.append({"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1",
                                                               "kind": "Scale"}, "verbs": _SUB_VERBS})
    for sub in r.connect:
        subs.append({"subresource": sub, "responseKind": {"group": "", "version": "", "kind": ""},
                     "verbs": _CONNECT_VERBS.get(sub, ["get"])})
    if subs:
        entry["subresources"] = subs
    return entry


def aggregated(registry: Registry, *, core: bool) -> dict[str, Any]:
    """The APIGroupDiscoveryList for ``/api`` (core) or ``/apis`` (every named group)."""
    items = []
    for group, versions in registry.group_versions().items():
        if (group == "") != core:
            continue
        items.append({"metadata": {"name": group}, "versions": [
            {"version": v, "freshness": "Current",
             "resources": [_aggregated_resource(r) for r in registry if r.group == group and r.version == v]}
            for v in versions]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
            "items": items}


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _operation(r: Resource) -> dict[str, Any]:
    return {"patch": {
        "operationId": f"patch{r.kind}",
        "x-kubernetes-action": "patch",
        "x-kubernetes-group-version-kind": {"group": r.group, "version": r.version, "kind": r.kind},
        "parameters": [{"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
                       {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": True}}],
        "requestBody": {"content": {"application/json-patch+json": {"schema": {"type": "object"}},
                                    "application/merge-patch+json": {"schema": {"type": "object"}},
                                    "application/apply-patch+yaml": {"schema": {"type": "object"}}}},
        "responses": {"200": {"description": "OK"}}}}


def openapi_group_version(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    resources = [r for r in registry if r.group == group and r.version == version]
    if not resources:
        return None
    paths: dict[str, Any] = {}
    # The built-in kinds' real schemas (what `kubectl explain` reads), each with the models it reaches.
    schemas: dict[str, Any] = dict(_built_in_schemas(tuple(r.kind for r in resources if not r.schema), group, version))
    for r in resources:
        prefix = "/" + _gv_path(group, version)
        scope = "/namespaces/{namespace}" if r.namespaced else ""
        paths[f"{prefix}{scope}/{r.plural}/{{name}}"] = _operation(r)
        model = None if r.schema else model_for(r.group, r.version, r.kind)
        if model is not None:
            continue
        schema: dict[str, Any] = dict(r.schema) if r.schema else {"type": "object"}
        schema["x-kubernetes-group-version-kind"] = [{"group": r.group, "version": r.version, "kind": r.kind}]
        schemas[f"{'.'.join(reversed(r.group.split('.'))) if r.group else 'io.k8s.api.core'}.{version}.{r.kind}"] = \
            schema
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": paths,
            "components": {"schemas": schemas}}


@functools.lru_cache(maxsize=64)
def _built_in_schemas(kinds: tuple[str, ...], group: str, version: str) -> dict[str, Any]:
    """Built once per group-version and set of kinds: the documents are asked for on every cold kubectl cache."""
    return kind_schemas((group, version, kind) for kind in kinds)


def _hash(doc: Any) -> str:
    return hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:64].upper()


def openapi_root(registry: Registry) -> dict[str, Any]:
    paths = {}
    gvs: Iterable[tuple[str, str]] = [(g, v) for g, vs in registry.group_versions().items() for v in vs]
    for group, version in gvs:
        doc = openapi_group_version(registry, group, version)
        path = _gv_path(group, version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={_hash(doc)}"}
    return {"paths": paths}


def openapi_v2(registry: Registry) -> dict[str, Any]:
    """The Swagger 2.0 document (``/openapi/v2``): every group-version's schemas under ``definitions``, a field of a
    model type a plain ``$ref`` with its description beside it, as upstream's v2 document writes it."""
    definitions: dict[str, Any] = {}
    for group, versions in registry.group_versions().items():
        for version in versions:
            doc = openapi_group_version(registry, group, version) or {}
            for name, schema in doc.get("components", {}).get("schemas", {}).items():
                # A kind is also a model other group-versions reach (a claim template); its own document's
                # schema, which names the kind, wins.
                if name not in definitions or "x-kubernetes-group-version-kind" in schema:
                    definitions[name] = schema
    text = json.dumps(definitions).replace('"#/components/schemas/', '"#/definitions/')
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": {},
            "definitions": _plain_refs(json.loads(text))}


def _plain_refs(value: Any) -> Any:
    if isinstance(value, dict):
        all_of = value.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict) and "$ref" in all_of[0]:
            value = {**{k: v for k, v in value.items() if k != "allOf"}, "$ref": all_of[0]["$ref"]}
        return {k: _plain_refs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_refs(v) for v in value]
    return value


def openapi_v2_handler(registry: Registry) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``GET /openapi/v2`` in JSON; a client that accepts only protobuf (kubectl's fallback) gets 404, which it
    takes as no v2 document, since the server does not speak protobuf."""
    async def handler(request: web.Request) -> web.Response:
        accept = request.headers.get("Accept", "")
        if accept and "json" not in accept and "*/*" not in accept:
            return status_reply(404, "the server could not find the requested resource")
        return json_reply(openapi_v2(registry))

    return handler


def version_handler(release: KubeRelease) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``/version`` names the release the server is judging apps/v1 by (``up --kube-version``)."""
    info = {**VERSION_INFO, "major": str(release.major), "minor": str(release.minor),
            "gitVersion": f"v{release.name}-rollwise"}

    async def version(_request: web.Request) -> web.Response:
        return json_reply(info)

    return version
