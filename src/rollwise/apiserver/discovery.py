"""Discovery documents (legacy and aggregated v2) and the OpenAPI v3 stub, from the resource table.

Shapes from ``shared/reference/kubectl-wire.md`` §4.2 to 4.3. The aggregated form is served only when the Accept
header asks for ``v=v2`` (kubectl 1.32 does; older clients get the legacy documents they ask for). The OpenAPI
stub declares, per kind, a PATCH operation with ``x-kubernetes-group-version-kind`` and a ``fieldValidation``
parameter: kubectl then leaves field validation to the server. Strategic merge patch is left out of the request
content types, so kubectl uses its compiled-in SMP for built-ins and merge patch for custom resources. Every
group-version URL carries a content hash, because kubectl caches hashed OpenAPI URLs as immutable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from rollwise.apiserver.resources import Registry, Resource

__all__ = [
    "AGGREGATED_CONTENT_TYPE",
    "aggregated",
    "api_group",
    "api_group_list",
    "api_resource_list",
    "api_versions",
    "openapi_group_version",
    "openapi_root",
    "wants_aggregated",
]

AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
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
    schemas: dict[str, Any] = {}
    for r in resources:
        prefix = "/" + _gv_path(group, version)
        scope = "/namespaces/{namespace}" if r.namespaced else ""
        paths[f"{prefix}{scope}/{r.plural}/{{name}}"] = _operation(r)
        schema: dict[str, Any] = dict(r.schema) if r.schema else {"type": "object"}
        schema["x-kubernetes-group-version-kind"] = [{"group": r.group, "version": r.version, "kind": r.kind}]
        schemas[f"{'.'.join(reversed(r.group.split('.'))) if r.group else 'io.k8s.api.core'}.{version}.{r.kind}"] = \
            schema
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": paths,
            "components": {"schemas": schemas}}


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
