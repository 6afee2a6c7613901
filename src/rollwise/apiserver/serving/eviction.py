"""``POST /api/v1/namespaces/{ns}/pods/{name}/eviction`` (policy/v1 ``Eviction``): a deletion that honours the
PodDisruptionBudgets selecting the pod, answered as kube-apiserver answers it (``pkg/registry/core/pod/storage/
eviction.go``):

- allowed: the pod is deleted (with the Eviction's ``deleteOptions``) and the reply is ``201`` with a ``Status`` of
  ``Success``;
- refused by a budget: ``429 TooManyRequests``, "Cannot evict pod as it would violate the pod's disruption budget.",
  with a cause of type ``DisruptionBudget`` saying how many healthy pods the budget needs and has;
- more than one budget selecting the pod: ``500``, as kube-apiserver refuses to choose between them;
- a body naming another pod: ``400``; no such pod: ``404``.

The budget's allowance is computed from the pods as the disruption controller would write it now
(``api/disruption.py``): ``up`` runs no disruption controller, so there is no status to go stale or to wait for. It is
authorized as the verb ``create`` on ``pods/eviction`` and audited, like the other pod subresources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from aiohttp import web

from rollwise.api.disruption import budget_state, eviction_verdict, selects
from rollwise.api.errors import ApiStatusError, BadRequest, InternalError
from rollwise.api.meta import Obj, uid_of
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.serving.http import json_reply, read_body
from rollwise.apiserver.serving.middleware import USER
from rollwise.apiserver.serving.requests import dry_run_of
from rollwise.apiserver.serving.status import error_status, success_status
from rollwise.apiserver.storage.store import ApiStore
from rollwise.runtime.setkeys import all_sets

__all__ = ["EVICTION_PATH", "TooManyRequests", "add_eviction_route"]

EVICTION_PATH = "/api/v1/namespaces/{namespace}/pods/{name}/eviction"
REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."


class TooManyRequests(ApiStatusError):
    code = 429
    reason = "TooManyRequests"

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.causes = [{"reason": "DisruptionBudget", "message": cause}]


class _Guard(Protocol):
    def authorize_write(self, request: web.Request, resource: Resource, namespace: str, name: str,
                        sub: str) -> None: ...

    def audit_write(self, request: web.Request, resource: Resource, namespace: str, name: str, sub: str,
                    obj: Obj, code: int) -> None: ...


def add_eviction_route(router: web.UrlDispatcher, store: ApiStore, guard: _Guard) -> None:
    """Registered before the generic resource routes, which know no ``eviction`` subresource."""

    async def evict(request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        pods = store.registry.find("", "v1", "pods")
        assert pods is not None
        try:
            guard.authorize_write(request, pods, namespace, name, "eviction")
            options = _delete_options(await read_body(request), name)
            pod = store.get(pods, namespace, name)
            _check_budgets(store, namespace, pod)
            store.delete(pods, namespace, name, options, actor=request[USER], dry_run=dry_run_of(request.query))
        except ApiStatusError as err:
            return json_reply(error_status(err, kind=pods.plural, name=name), err.code)
        guard.audit_write(request, pods, namespace, name, "eviction", pod, 201)
        return json_reply(success_status(kind="pods", group="", name=name, uid=uid_of(pod)), 201)

    router.add_post(EVICTION_PATH, evict)


def _delete_options(body: Any, name: str) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise BadRequest("the body must be a policy/v1 Eviction object")
    named = (body.get("metadata") or {}).get("name") if isinstance(body.get("metadata"), Mapping) else None
    if named and named != name:
        raise BadRequest("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions") or {}
    if not isinstance(options, Mapping):
        raise BadRequest("deleteOptions must be an object")
    return options


def _check_budgets(store: ApiStore, namespace: str, pod: Obj) -> None:
    budgets = [b for b in store.cluster.list("PodDisruptionBudget", namespace) if selects(b, pod)]
    if not budgets:
        return
    if len(budgets) > 1:
        raise InternalError("This pod has more than one PodDisruptionBudget, which the eviction subresource does "
                            "not support.")
    pods = store.cluster.list("Pod", namespace)
    scales = {uid_of(s): int(s["spec"].get("replicas", 1)) for s in all_sets(store.cluster, namespace)}
    verdict = eviction_verdict(budget_state(budgets[0], pods, scales), pod)
    if not verdict.allowed:
        raise TooManyRequests(REFUSED, verdict.reason)

