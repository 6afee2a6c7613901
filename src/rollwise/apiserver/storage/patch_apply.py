"""The four patch types over an object in its served shape: JSON patch, merge patch, strategic merge patch and
server-side apply. Malformed patches and results that are no object are Invalid or BadRequest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonpatch

from rollwise.api.errors import BadRequest, FieldError, Invalid
from rollwise.api.meta import Obj
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.storage.fieldsets import ListTypes
from rollwise.apiserver.storage.ownership import apply
from rollwise.apiserver.storage.smp import PatchError, strategic_merge
from rollwise.cluster.store.patching import merge_patch

__all__ = ["patched"]


def patched(resource: Resource, base: Obj, kind: str, patch: Any, *, manager: str | None, force: bool, now: str,
            subresource: str) -> Obj:
    """``base`` (a private copy, changed in place where a patch type does so) with ``patch`` of ``kind``
    (``json``, ``merge``, ``apply``, ``strategic``) applied; its metadata a dict of its own."""
    try:
        if kind == "json":
            if not isinstance(patch, list):
                raise BadRequest("a JSON patch must be a list of operations")
            new = jsonpatch.apply_patch(base, patch)
        elif not isinstance(patch, Mapping):
            raise BadRequest("a merge patch must be a JSON object")
        elif kind == "merge":
            new = merge_patch(base, patch)
        elif kind == "apply":
            if not isinstance(patch.get("metadata") or {}, Mapping):  # as kube-apiserver's decoding refuses it
                raise Invalid(errors=[FieldError(path="metadata", value=patch["metadata"], rule="must be an object")])
            new = apply(base, patch, manager=manager or "unknown", force=force, types=ListTypes(resource.schema),
                        api_version=resource.api_version, now=now, subresource=subresource)
        else:
            new = strategic_merge(base, patch)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, PatchError) as err:
        raise Invalid(str(err)) from None
    if not isinstance(new, dict):
        raise Invalid("the patched object is not an object")
    if not isinstance(new.get("metadata") or {}, Mapping):
        raise Invalid(errors=[FieldError(path="metadata", value=new["metadata"], rule="must be an object")])
    meta = new["metadata"] = dict(new.get("metadata") or {})
    for key in _OMIT_EMPTY:
        if key in meta and meta[key] in ({}, [], None):
            # ObjectMeta's fields are omitempty: the object kube-apiserver decodes the result into (typed, or coerced
            # for a custom resource) has no empty labels or annotations to write back. kubectl diff's dry-run patch
            # adds "annotations": {} to an object that has none, and would show it as a change.
            del meta[key]
    return new


_OMIT_EMPTY = ("labels", "annotations", "finalizers", "ownerReferences")
