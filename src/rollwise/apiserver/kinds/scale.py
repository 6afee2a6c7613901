"""The ``Scale`` (autoscaling/v1) a ``/scale`` subresource shows: replicas wanted and seen, and the selector."""

from __future__ import annotations

from rollwise.api.meta import Obj
from rollwise.apiserver.kinds.printers import jsonpath_value
from rollwise.apiserver.kinds.resources import Resource

__all__ = ["scale_of"]


def scale_of(resource: Resource, obj: Obj) -> Obj:
    spec_path, status_path, selector_path = resource.scale_paths
    selector = jsonpath_value(obj, selector_path)
    if selector is None and not resource.custom:
        # A built-in kind's selector, as its registry strategy renders it (a ReplicationController's is a map).
        given = (obj.get("spec") or {}).get("selector") or {}
        labels = given if resource.kind == "ReplicationController" else given.get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    meta = obj["metadata"]
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if meta.get(k) not in (None, "")},
            "spec": {"replicas": int(jsonpath_value(obj, spec_path) or 0)},
            "status": {"replicas": int(jsonpath_value(obj, status_path) or 0),
                       **({"selector": selector} if selector else {})}}
