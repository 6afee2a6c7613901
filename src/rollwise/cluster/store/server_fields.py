"""The fields only the API server writes, and the rules for them on create and update.

- a client never sets ``uid``, ``creationTimestamp``, the deletion fields, ``resourceVersion`` or ``generation``:
  on create they are dropped (the store sets them), on update the stored values are kept;
- ``generation`` goes up by one when ``spec`` changes (and on a deletion request, ``rollwise.cluster.store.deletion``);
- no finalizer may be added to an object that is being deleted (upstream ``ValidateObjectMetaUpdate``);
- an update whose result equals the stored object is not written (``unchanged``).
"""

from __future__ import annotations

from typing import Any

from rollwise.api.errors import FieldError, Invalid
from rollwise.api.meta import Obj

__all__ = ["SERVER_OWNED", "check_no_new_finalizers", "keep_server_fields", "next_generation", "strip_server_fields",
           "unchanged"]

SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds")


def strip_server_fields(meta: dict[str, Any]) -> None:
    """On create: drop what the client may not set."""
    for field in (*SERVER_OWNED, "resourceVersion", "generation"):
        meta.pop(field, None)


def keep_server_fields(meta: dict[str, Any], old_meta: dict[str, Any]) -> None:
    """On update: the stored server-owned fields win over what the client sent."""
    for field in SERVER_OWNED:
        if field in old_meta:
            meta[field] = old_meta[field]
        else:
            meta.pop(field, None)


def check_no_new_finalizers(meta: dict[str, Any], old_meta: dict[str, Any]) -> None:
    """Raise Invalid if an update adds finalizers to an object that is being deleted."""
    if old_meta.get("deletionTimestamp") is None:
        return
    added = [f for f in meta.get("finalizers") or () if f not in (old_meta.get("finalizers") or ())]
    if added:
        raise Invalid(errors=[FieldError(path="metadata.finalizers", kind="Forbidden", rule="no new "
                                         f"finalizers can be added if the object is being deleted: {added}")])


def next_generation(new: Obj, old: Obj) -> int:
    return int(old["metadata"].get("generation", 1)) + (new.get("spec") != old.get("spec"))


def unchanged(old: Obj, new: Obj) -> bool:
    """Whether an update's result equals the stored object, its resourceVersion aside: then nothing is written.

    kube-apiserver's storage does the same (``GuaranteedUpdate`` in k8s.io/apiserver/pkg/storage/etcd3/store.go):
    the updated object, with the server's fields set as on any update, is encoded and compared with the stored bytes;
    when equal it returns the stored object with its old resourceVersion, writes nothing and no watcher hears of it.
    """
    if new.keys() != old.keys():
        return False
    if any(new[k] != old[k] for k in new if k != "metadata"):
        return False
    meta, old_meta = new["metadata"], old["metadata"]
    return {k: v for k, v in meta.items() if k != "resourceVersion"} == {
        k: v for k, v in old_meta.items() if k != "resourceVersion"}
