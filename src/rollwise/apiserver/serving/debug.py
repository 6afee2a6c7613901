"""``up --debug-endpoints``: misbehaviour on request, under ``/debug/rollwise/``.

- ``POST /debug/rollwise/compact``: compact the watch history (a watch from before gets 410 Gone);
- ``POST /debug/rollwise/drop-watches``: end every open watch stream;
- ``POST /debug/rollwise/namespaces/<ns>/pods/<name>/fault`` with ``{"fault": "crash"}`` (optionally
  ``"container"``): one of the simulator's pod faults (``crash``, ``unready``, ``recover``, ``fail``, ``kill``;
  ``kubelet/agent.py``) happens to the pod now, in ``up``'s kubelet, as a scenario's ``podFault`` step does.
  ``kubectl create --raw /debug/rollwise/namespaces/default/pods/web-0/fault -f fault.json`` sends it.

Why an endpoint for pod faults, rather than an annotation the kubelet honours or a command of its own: a fault is
an event, not a state (``kill`` twice is two restarts; an annotation would have to be a counter, would change the
pod object and wake every controller watching it, which the simulator's fault does not), and it happens to the
container runtime, which no Kubernetes API models; a debug path says so, kubectl reaches it with the kubeconfig it
already has, and it is guarded like the resource paths: authenticated, authorized (with ``--authz rbac``) as the
verb ``create`` on the subresource ``pods/fault`` in the pod's namespace, as ``pods/eviction`` is, and audited.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from aiohttp import web

from rollwise.api.errors import ApiStatusError, Conflict, FieldError, Invalid
from rollwise.api.meta import Obj
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.serving.config import ServerConfig
from rollwise.apiserver.serving.http import json_reply, read_body
from rollwise.apiserver.serving.status import error_status
from rollwise.apiserver.storage.store import ApiStore

__all__ = ["FAULT_PATH", "add_debug_routes"]

FAULT_PATH = "/debug/rollwise/namespaces/{namespace}/pods/{name}/fault"
_FAULT_KEYS = ("container", "fault")


class _Guard(Protocol):
    """What the resource handlers do around a write: authorize it, audit it (``app._Api``)."""

    def authorize_write(self, request: web.Request, resource: Resource, namespace: str, name: str,
                        sub: str) -> None: ...

    def audit_write(self, request: web.Request, resource: Resource, namespace: str, name: str, sub: str,
                    obj: Obj, code: int) -> None: ...


def add_debug_routes(router: web.UrlDispatcher, store: ApiStore, cfg: ServerConfig, guard: _Guard) -> None:
    async def compact(_request: web.Request) -> web.Response:
        store.cluster.compact_history()
        return json_reply({"compactedAt": str(store.resource_version)})

    async def drop_watches(_request: web.Request) -> web.Response:
        store.cluster.drop_watches()
        return json_reply({"dropped": True})

    async def pod_fault(request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        pods = store.registry.find("", "v1", "pods")
        assert pods is not None
        try:
            guard.authorize_write(request, pods, namespace, name, "fault")
            fault, container = fault_request(await read_body(request))
            inject: Callable[[str, str, str, str | None], Obj] | None = cfg.pod_fault
            if inject is None:
                raise Conflict("this server runs no kubelet to take a pod fault")
            pod = inject(namespace, name, fault, container)
        except ApiStatusError as err:
            # As the resource paths word it: the kind for Invalid, the plural otherwise.
            kind = pods.kind if isinstance(err, Invalid) else pods.plural
            return json_reply(error_status(err, kind=kind, name=name), err.code)
        guard.audit_write(request, pods, namespace, name, "fault", pod, 201)
        meta = pod.get("metadata") or {}
        return json_reply({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                           "message": f'pod "{name}": {fault}' + (f" (container {container})" if container else ""),
                           "details": {"name": name, "kind": "pods", "uid": str(meta.get("uid", ""))}}, 201)

    router.add_post("/debug/rollwise/compact", compact)
    router.add_post("/debug/rollwise/drop-watches", drop_watches)
    router.add_post(FAULT_PATH, pod_fault)


def fault_request(body: Any) -> tuple[str, str | None]:
    """``{"fault": ..., "container": ...}`` checked for shape (which faults exist is the kubelet's to say)."""
    if not isinstance(body, Mapping):
        raise Invalid("the body must be an object", errors=[FieldError(
            path="<body>", value=type(body).__name__, rule='must be an object such as {"fault": "crash"}')])
    errors = [FieldError(path=str(k), kind="Unsupported value", value=k,
                         rule="supported values: " + ", ".join(f'"{x}"' for x in _FAULT_KEYS))
              for k in body if k not in _FAULT_KEYS]
    fault, container = body.get("fault"), body.get("container")
    if fault is None:
        errors.append(FieldError(path="fault", kind="Required value", rule="the fault to inject, e.g. crash"))
    elif not isinstance(fault, str):
        errors.append(FieldError(path="fault", value=fault, rule="must be a string"))
    if container is not None and not isinstance(container, str):
        errors.append(FieldError(path="container", value=container, rule="must be a string"))
    if errors:
        raise Invalid(errors=errors)
    assert isinstance(fault, str)
    return fault, container if isinstance(container, str) else None
