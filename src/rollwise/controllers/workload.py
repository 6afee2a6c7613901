"""What the Deployment and ReplicaSet controllers decide, as data: writes to objects of any kind, and when to look
again. The driver that executes a plan (``local/hosted.py``) does the I/O; deciding reads no clock (``now`` is
in the view) and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.meta import Obj, name_of, namespace_of, owner_reference

__all__ = ["Create", "Delete", "Update", "UpdateStatus", "WorkloadPlan", "pod_template_hash", "stamped"]


@dataclass(frozen=True, slots=True)
class Create:
    obj: Obj
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Update:
    """A write of the main object (spec, labels, annotations, owner references)."""

    obj: Obj
    reason: str = ""


@dataclass(frozen=True, slots=True)
class UpdateStatus:
    obj: Obj


@dataclass(frozen=True, slots=True)
class Delete:
    group: str
    kind: str
    namespace: str
    name: str
    uid: str
    reason: str = ""


Action = Create | Update | UpdateStatus | Delete


@dataclass(slots=True)
class WorkloadPlan:
    actions: list[Action] = field(default_factory=list)
    requeue_after: float | None = None
    """Look again this many seconds later (a pod becoming available after minReadySeconds, a progress deadline)."""

    def wake(self, after: float) -> None:
        if after > 0 and (self.requeue_after is None or after < self.requeue_after):
            self.requeue_after = after


_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # upstream's SafeEncodeString alphabet: no vowels, no look-alikes


def pod_template_hash(template: Mapping[str, Any], collisions: int = 0) -> str:
    """A stable short name for a pod template (the ``pod-template-hash`` label and the ReplicaSet's suffix)."""
    digest = hashlib.sha256(json.dumps([template, collisions], sort_keys=True, default=str).encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:10])


def stamped(owner: Obj, template: Mapping[str, Any], name: str) -> Obj:
    """A pod from ``owner``'s template: its labels and annotations, controlled by ``owner``, named ``name``."""
    meta = dict(template.get("metadata") or {})
    pod_meta: dict[str, Any] = {"name": name, "namespace": namespace_of(owner),
                                "labels": dict(meta.get("labels") or {}),
                                "ownerReferences": [owner_reference(owner)]}
    if meta.get("annotations"):
        pod_meta["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
            "spec": json.loads(json.dumps(template.get("spec") or {}))}


def child_name(owner: Obj, taken: set[str], seed: int) -> str:
    """A pod name ``<owner>-<5 chars>`` not in ``taken``: deterministic (from the owner's uid and ``seed``), where
    upstream's generateName draws random characters."""
    base = name_of(owner)[:57]
    n = seed
    while True:
        digest = hashlib.sha256(f"{owner['metadata'].get('uid', '')}/{n}".encode()).digest()
        name = f"{base}-{''.join(_SAFE[b % len(_SAFE)] for b in digest[:5])}"
        if name not in taken:
            return name
        n += 1
