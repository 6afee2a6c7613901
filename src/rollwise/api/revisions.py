"""ControllerRevision data, hashing and naming (reference §3.1).

What is hashed is only the pod template, as ``{"spec": {"template": {"$patch": "replace", ...}}}`` serialised
as compact JSON with sorted keys. Byte-compatibility with Go's serialiser is not a goal (reference §10.4): our
names are stable for a given template, which is what rollouts depend on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rollwise.api.defaults import stored_template
from rollwise.api.memo import IdentityMemo
from rollwise.api.meta import Obj, annotations_of, name_of, namespace_of, owner_reference

__all__ = [
    "HASH_LABEL",
    "canonical_json",
    "fnv1_32",
    "hash_revision_data",
    "new_revision",
    "revision_data",
    "revision_name",
    "revision_number",
    "revision_sort_key",
    "revisions_equal",
    "safe_encode",
    "stored_as_is",
    "template_of",
]

HASH_LABEL = "controller.kubernetes.io/hash"
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 2166136261
_FNV_PRIME = 16777619


def canonical_json(obj: Any) -> str:
    """Compact JSON with sorted keys, the shape Go's encoder produces for maps."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fnv1_32(data: bytes) -> int:
    """32-bit FNV-1 (multiply, then xor; Go's ``hash/fnv.New32``, not FNV-1a)."""
    h = _FNV_OFFSET
    for b in data:
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
        h ^= b
    return h


def safe_encode(text: str) -> str:
    """Map each character through the alphabet without vowels or look-alikes (Go's ``rand.SafeEncodeString``)."""
    return "".join(_SAFE_ALPHABET[ord(c) % len(_SAFE_ALPHABET)] for c in text)


def hash_revision_data(raw: str, collision_count: int) -> str:
    """FNV-1-32 over the serialised data followed by the decimal collision count, safe-encoded (reference §3.1)."""
    return safe_encode(str(fnv1_32(raw.encode() + str(collision_count).encode())))


_STORED: IdentityMemo[Obj] = IdentityMemo()


def _stored(template: Any) -> Obj:
    """The template as stored (defaults applied, canonical quantities, omitempty fields dropped), memoised on the
    identity of the template object (api/memo.py): a set reconciled on every pod event computes it once per spec
    version."""
    if not isinstance(template, dict):
        return template  # type: ignore[no-any-return]
    return _STORED.cached((template,), None, lambda: stored_template(template))


def stored_as_is(template: Obj) -> None:
    """Note that ``template`` is in its stored form already (admission made it so: ``stored_template`` is
    idempotent), so ``revision_data`` takes it as it is for as long as that object lives. Only for objects that are
    never changed afterwards: a store's."""
    _STORED.put((template,), None, template)


def revision_data(sts: Mapping[str, Any]) -> Obj:
    """The patch a revision stores: the set's pod template as the API server stores it, marked as a whole-object
    replacement.

    Upstream hashes the stored template, so a change that only changes how the manifest is written (``cpu: 0.5``
    for ``500m``, ``env: []`` for no env, a field spelled out at its default) keeps the revision and replaces no pod.
    The template's nested objects are the memoised stored template's, shared and read-only like every object a
    store holds: a comparison on every reconcile and a revision handed to the store copy nothing.
    """
    stored = _stored(sts["spec"]["template"])
    return {"spec": {"template": {"$patch": "replace", **stored}}}


def revision_name(set_name: str, data: Mapping[str, Any], collision_count: int) -> str:
    return f"{set_name[:223]}-{hash_revision_data(canonical_json(data), collision_count)}"


def template_of(revision: Mapping[str, Any]) -> Obj:
    """The pod template a revision holds."""
    tmpl = dict(revision["data"]["spec"]["template"])
    tmpl.pop("$patch", None)
    return tmpl


def revision_number(revision: Mapping[str, Any]) -> int:
    return int(revision.get("revision", 0))


def revision_sort_key(revision: Mapping[str, Any]) -> tuple[int, float, str]:
    """Ascending by .revision, then creation time, then name (reference §3.2)."""
    meta = revision.get("metadata", {})
    return revision_number(revision), float(meta.get("creationTimestamp") or 0.0), name_of(revision)


def revisions_equal(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same template data (reference §3.1 EqualRevision; our hashes never parse as integers, so data decides).

    Deep equality of the decoded data is the semantic comparison upstream added after #134773: key order and
    serialisation details cannot make two equal templates differ.
    """
    return a.get("data") == b.get("data")


def new_revision(sts: Mapping[str, Any], *, number: int, collision_count: int) -> Obj:
    """A ControllerRevision for the set's current template (reference §3.1 NewControllerRevision)."""
    data = revision_data(sts)
    name = revision_name(name_of(sts), data, collision_count)
    tmpl_labels = dict((sts["spec"]["template"].get("metadata") or {}).get("labels") or {})
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": namespace_of(sts),
            "labels": {**tmpl_labels, HASH_LABEL: name.rsplit("-", 1)[1]},
            "annotations": dict(annotations_of(sts)),
            "ownerReferences": [owner_reference(sts)],
        },
        "data": data,
        "revision": number,
    }
