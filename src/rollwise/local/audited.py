"""The in-process controllers' writes in ``rollwise up``'s audit log, as kube-apiserver's audit log has
kube-controller-manager's requests.

On a real cluster the StatefulSet controller is a client like any other: every pod it creates or deletes is an API
request, audited under its user. With ``--use-service-account-credentials`` (kubeadm's default) each controller
uses its own service account, so the log names it: ``system:serviceaccount:kube-system:statefulset-controller``.
``up`` runs its controllers in-process, writing straight to the store; this wrapper gives those writes the same
trail, one line per write in the server's own entry format (time, user, verb, resource, namespace, name,
resourceVersion, code), a refused write with its status code. Reads pass through untouched.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.protocol import Propagation
from rollwise.cluster.resources import ResourceRef
from rollwise.cluster.store.memory import MemoryCluster

__all__ = ["SERVICE_ACCOUNT_PREFIX", "AuditedCluster", "controller_user"]

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:kube-system:"

Audit = Callable[[dict[str, Any]], None]
T = TypeVar("T", Obj, Obj | None)


def controller_user(actor: str) -> str:
    """The user an in-process controller's writes are audited as: its kube-system service account."""
    return SERVICE_ACCOUNT_PREFIX + actor


class AuditedCluster:
    """``cluster``'s verbs; each write is also handed to ``audit`` as the server would log a request."""

    def __init__(self, cluster: MemoryCluster, audit: Audit, *, clock: Callable[[], float] = time.time) -> None:
        self._cluster = cluster
        self._audit = audit
        self._clock = clock

    # -- reads, as the wrapped cluster serves them (the owner index included) ---------------------------------

    def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj:
        return self._cluster.get(kind, namespace, name)

    def list(self, kind: ResourceRef, namespace: str | None = None, *,
             selector: Mapping[str, Any] | None = None) -> builtins.list[Obj]:
        return self._cluster.list(kind, namespace, selector=selector)

    def controlled_by(self, kind: ResourceRef, owner_uid: str) -> builtins.list[Obj]:
        return self._cluster.controlled_by(kind, owner_uid)

    def uncontrolled(self, kind: ResourceRef, namespace: str) -> builtins.list[Obj]:
        return self._cluster.uncontrolled(kind, namespace)

    def changes_since(self, cursor: int) -> Any:
        return self._cluster.changes_since(cursor)

    # -- writes ------------------------------------------------------------------------------------------------

    def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        where = (obj, namespace_of(obj), name_of(obj))
        return self._write("create", where, "", actor,
                           lambda: self._cluster.create(obj, actor=actor, handed_over=handed_over), 201)

    def update(self, obj: Obj, *, actor: str = "user") -> Obj:
        where = (obj, namespace_of(obj), name_of(obj))
        return self._write("update", where, "", actor, lambda: self._cluster.update(obj, actor=actor), 200)

    def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj:
        where = (obj, namespace_of(obj), name_of(obj))
        return self._write("update", where, "status", actor,
                           lambda: self._cluster.update_status(obj, actor=actor, handed_over=handed_over), 200)

    def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *,
              actor: str = "user") -> Obj:
        return self._write("patch", (kind, namespace, name), "", actor,
                           lambda: self._cluster.patch(kind, namespace, name, merge, actor=actor), 200)

    def delete(self, kind: ResourceRef, namespace: str, name: str, *, grace_period_seconds: float | None = None,
               propagation: Propagation = "Background", preconditions: Mapping[str, Any] | None = None,
               actor: str = "user") -> Obj | None:
        return self._write("delete", (kind, namespace, name), "", actor, lambda: self._cluster.delete(
            kind, namespace, name, grace_period_seconds=grace_period_seconds, propagation=propagation,
            preconditions=preconditions, actor=actor), 200)

    def _write(self, verb: str, where: tuple[ResourceRef | Obj, str, str], sub: str, actor: str,
               call: Callable[[], T], code: int) -> T:
        what, namespace, name = where
        try:
            result = call()
        except ApiStatusError as err:
            self._entry(verb, what, sub, namespace, name, actor, "", err.code)
            raise
        rv = ((result or {}).get("metadata") or {}).get("resourceVersion", "")
        self._entry(verb, what, sub, namespace, name, actor, str(rv), code)
        return result

    def _entry(self, verb: str, what: ResourceRef | Obj, sub: str, namespace: str, name: str, actor: str, rv: str,
               code: int) -> None:
        table = self._cluster.resources
        row = table.get(table.of(what) if isinstance(what, dict) else table.resolve(what))
        resource = f"{row.plural}.{row.group}" if row.group else row.plural
        self._audit({"time": self._clock(), "user": controller_user(actor), "verb": verb,
                     "resource": resource + (f"/{sub}" if sub else ""), "namespace": namespace, "name": name,
                     "resourceVersion": rv, "code": code})
