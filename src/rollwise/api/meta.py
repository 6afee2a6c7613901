"""Object metadata helpers over API-shaped dicts.

Objects travel through rollwise as the dicts the Kubernetes API speaks (``{"apiVersion", "kind", "metadata",
"spec", "status"}``), not as a parallel class hierarchy. That keeps unknown fields intact end to end (a user's
pod template round-trips exactly), makes the memory store, the scenario files and a real API server speak one
shape, and keeps hot loops cheap. Typed access lives in small functions like these, one rule each.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "LAST_APPLIED",
    "PROJECT_GROUP",
    "Obj",
    "annotations_of",
    "controller_of",
    "deletion_timestamp",
    "format_selector",
    "format_time",
    "is_controlled_by",
    "labels",
    "last_applied_configuration",
    "name_of",
    "namespace_of",
    "owner_reference",
    "selector_matches",
    "shares_owner_references",
    "uid_of",
]

Obj = dict[str, Any]
"""An API object as a dict. Treat objects read from a view or a store as read-only; copy before changing."""

PROJECT_GROUP = "apps.rollwise.dev"
"""The project's API group: its StatefulSet, AnalysisTemplate and AnalysisRun kinds, served by their CRDs
(cluster/crd/). Typed here once; the resource table, the CRD generators, the client and the controllers read it."""

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
"""Where ``kubectl apply`` keeps what it last applied, the "original" of its next three-way merge."""

_GO_JSON_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                                  "\u2029": "\\u2029"})


def last_applied_configuration(obj: Mapping[str, Any]) -> str:
    """The value ``kubectl apply`` records in :data:`LAST_APPLIED` for ``obj``: the object with that annotation
    emptied out (an empty ``annotations`` map stays, as kubectl leaves it), printed as Go's ``encoding/json`` prints
    a map (sorted keys, compact, ``<``, ``>`` and ``&`` escaped) with its encoder's trailing newline."""
    metadata = dict(obj.get("metadata") or {})
    metadata["annotations"] = {k: v for k, v in (metadata.get("annotations") or {}).items() if k != LAST_APPLIED}
    text = json.dumps({**obj, "metadata": metadata}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_GO_JSON_ESCAPES) + "\n"


def name_of(obj: Mapping[str, Any]) -> str:
    try:
        return obj["metadata"]["name"]  # type: ignore[no-any-return]  # the hot path: most objects have one
    except (KeyError, TypeError):
        return ""


def namespace_of(obj: Mapping[str, Any]) -> str:
    try:
        namespace = obj["metadata"]["namespace"]  # the hot path, as for name_of
    except (KeyError, TypeError):
        return "default"
    return namespace if type(namespace) is str and namespace else str(namespace or "default")


def uid_of(obj: Mapping[str, Any]) -> str:
    try:
        uid = obj["metadata"]["uid"]
    except (KeyError, TypeError):
        return ""
    return uid if type(uid) is str else str(uid)


def labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    try:
        found = obj["metadata"]["labels"]
    except (KeyError, TypeError):
        return {}
    return found or {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return obj.get("metadata", {}).get("annotations") or {}


def deletion_timestamp(obj: Mapping[str, Any]) -> float | None:
    """Virtual seconds at which deletion was requested, or None. Timestamps are float seconds throughout."""
    ts = obj.get("metadata", {}).get("deletionTimestamp")
    return None if ts is None else float(ts)


def owner_reference(owner: Mapping[str, Any], *, controller: bool = True) -> Obj:
    """A (controller) owner reference to ``owner``, with ``blockOwnerDeletion`` as upstream sets it."""
    return {
        "apiVersion": owner.get("apiVersion", "v1"),
        "kind": owner.get("kind", ""),
        "name": name_of(owner),
        "uid": uid_of(owner),
        "controller": controller,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The owner reference with ``controller: true``, if any."""
    ref: Mapping[str, Any]
    meta = obj.get("metadata")
    for ref in (meta.get("ownerReferences") if meta else None) or ():
        if ref.get("controller"):
            return ref
    return None


def shares_owner_references(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """``new`` carries the very owner-reference list ``old`` did (or neither has one): a write that left the
    references alone, as a status write does (it shares them), so whatever was derived from them stands. Identity,
    not equality: it is asked on every write, and stored objects are never changed in place."""
    return new["metadata"].get("ownerReferences") is old["metadata"].get("ownerReferences")


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == uid_of(owner)


_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}


def selector_matches(selector: Mapping[str, Any] | None, obj_labels: Mapping[str, str]) -> bool:
    """Kubernetes LabelSelector semantics. An empty or missing selector matches nothing (as for workloads)."""
    if not selector:
        return False
    match_labels = selector.get("matchLabels") or {}
    exprs = selector.get("matchExpressions") or []
    if not match_labels and not exprs:
        return False
    for k, v in match_labels.items():
        if obj_labels.get(k) != v:
            return False
    for e in exprs:
        op, k, values = e.get("operator"), e.get("key"), e.get("values") or []
        if op == "In" and obj_labels.get(k) not in values:
            return False
        if op == "NotIn" and k in obj_labels and obj_labels[k] in values:
            return False
        if op == "Exists" and k not in obj_labels:
            return False
        if op == "DoesNotExist" and k in obj_labels:
            return False
        if op not in _OPERATORS:
            return False
    return True


def format_selector(selector: Mapping[str, Any] | None) -> str:
    """A LabelSelector in the string form of apimachinery's ``metav1.FormatLabelSelector`` (requirements sorted by
    key, values sorted): what ``status.labelSelector`` carries for the scale subresource, HPA and ``kubectl``."""
    parts: list[tuple[str, str]] = []
    for key, value in ((selector or {}).get("matchLabels") or {}).items():
        parts.append((str(key), f"{key}={value}"))
    for expr in (selector or {}).get("matchExpressions") or []:
        key, op = str(expr.get("key")), expr.get("operator")
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        text = {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
                "DoesNotExist": f"!{key}"}.get(str(op))
        if text is not None:
            parts.append((key, text))
    return ",".join(text for _, text in sorted(parts))


def format_time(t: float) -> str:
    """``metav1.Time``: RFC 3339, whole seconds (the fraction is dropped, as upstream marshals it). The wire codec
    writes times with it (cluster/wire.py), and a message that names a moment states it so: it reads the same on
    every reconcile, where an elapsed time would change it, and the status with it, each second."""
    return _format_seconds(math.floor(t))


@functools.lru_cache(maxsize=4096)
def _format_seconds(seconds: int) -> str:
    # Many objects written in the same second carry the same times: every watch event of a pod repeats them.
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
