"""The ValidatingAdmissionPolicies bound to one write, judged over the objects in their served shape
(``policies.py`` evaluates them)."""

from __future__ import annotations

from rollwise.api.errors import NotFound
from rollwise.api.meta import Obj
from rollwise.apiserver.admission.chain import NAMESPACE
from rollwise.apiserver.admission.policies import BINDING, POLICY, PolicyRequest, policy_verdict
from rollwise.apiserver.kinds import event_shapes
from rollwise.apiserver.kinds.resources import Resource
from rollwise.cluster.store.memory import MemoryCluster

__all__ = ["policy_warnings", "wire_kind"]


def wire_kind(resource: Resource, obj: Obj) -> Obj:
    """A stored object in its resource's shape (an ``events.k8s.io`` Event from its stored ``v1`` form)."""
    if resource.stored_as is not None:
        return event_shapes.to_served(obj)
    return {**obj, "kind": resource.kind, "apiVersion": resource.api_version}


def policy_warnings(cluster: MemoryCluster, resource: Resource, operation: str, obj: Obj | None, old: Obj | None,
                    *, actor: str, sub: str = "") -> list[str]:
    """The warnings of the ``Warn`` bindings that matched; raises the denial of a ``Deny`` binding."""
    if resource.group == "admissionregistration.k8s.io":
        return []  # policies never judge the policy resources themselves
    bindings = cluster.list(BINDING)
    if not bindings:
        return []
    meta = (obj or old or {}).get("metadata") or {}
    namespace = str(meta.get("namespace") or "") if resource.namespaced else ""
    ns_obj = None
    if namespace:
        try:
            ns_obj = cluster.get(NAMESPACE, "", namespace)
        except NotFound:
            ns_obj = None
    req = PolicyRequest(operation=operation, group=resource.group, version=resource.version,
                        resource=resource.plural + (f"/{sub}" if sub else ""), kind=resource.kind,
                        namespace=namespace, name=str(meta.get("name") or ""), user=actor,
                        obj=None if obj is None else wire_kind(resource, obj),
                        old=None if old is None else wire_kind(resource, old), namespace_obj=ns_obj)
    return policy_verdict(cluster.list(POLICY), bindings, req)
