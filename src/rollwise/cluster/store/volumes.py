"""Volume expansion as the API server admits it: kube-apiserver's ``PersistentVolumeClaimResize`` admission plugin.

A claim whose storage request grows is refused unless the StorageClass that provisioned it allows expansion
(``allowVolumeExpansion: true``); the refusal is a 403 with the plugin's words. What this store assumes for a claim
that names no class: its stand-in provisioner (``apiserver/admission/chain.py`` binds every claim at creation) is the
default class and allows expansion, as the default classes of the big clouds do. A claim that names a class the
store does not hold, or one whose ``allowVolumeExpansion`` is not true, is refused, as on a cluster.

A request below the claim's capacity is refused as ``ValidatePersistentVolumeClaimUpdate`` refuses it with
RecoverVolumeExpansionFailure (GA in 1.34): 422, ``field can not be less than status.capacity``.
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api.claim_templates import quantity_or_none, requested_storage
from rollwise.api.errors import FieldError, Forbidden, Invalid, NotFound
from rollwise.api.meta import Obj, name_of
from rollwise.cluster.protocol import Cluster

__all__ = ["RESIZE_FORBIDDEN", "ClaimResize"]

RESIZE_FORBIDDEN = ("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc "
                    "must support resize")
_STORAGE = "spec.resources.requests.storage"

StorageClassOf = Callable[[str], Obj | None]


class ClaimResize:
    """The admission hook of claims (``MemoryCluster(admit=...)``); ``bind`` gives it the store to read classes from
    (the store is made after its hooks). Unbound, it judges only the shrink rule."""

    __slots__ = ("_class_of",)

    def __init__(self) -> None:
        self._class_of: StorageClassOf | None = None

    def bind(self, cluster: Cluster) -> None:
        def class_of(name: str) -> Obj | None:
            try:
                return cluster.get("StorageClass", "", name)
            except NotFound:
                return None
        self._class_of = class_of

    def admit(self, new: Obj, old: Obj | None) -> Obj:
        if old is None:
            return new
        grown, shrunk = _change(new, old)
        if shrunk:
            error = FieldError(path=_STORAGE, kind="Forbidden", rule="field can not be less than status.capacity")
            raise Invalid(f'PersistentVolumeClaim "{name_of(new)}" is invalid: {error}', errors=[error])
        if grown and self._class_of is not None and not self._expandable(new):
            raise Forbidden(f'persistentvolumeclaims "{name_of(new)}" is forbidden: {RESIZE_FORBIDDEN}')
        return new

    def _expandable(self, claim: Obj) -> bool:
        name = (claim.get("spec") or {}).get("storageClassName")
        if not name:
            return True  # the store's default provisioner (module docstring)
        assert self._class_of is not None
        found = self._class_of(str(name))
        return found is not None and found.get("allowVolumeExpansion") is True


def _change(new: Obj, old: Obj) -> tuple[bool, bool]:
    """(the request grew, the request went below the capacity)."""
    after, before = quantity_or_none(requested_storage(new)), quantity_or_none(requested_storage(old))
    if after is None or before is None:
        return False, False
    capacity = quantity_or_none(((old.get("status") or {}).get("capacity") or {}).get("storage"))
    return after > before, after < before and capacity is not None and after < capacity
