"""The quorum-aware companion's state on an ``apps/v1`` set: the annotation ``rollwise.dev/quorum-status``.

kube-controller-manager owns an ``apps/v1`` set's status, so the companion (operator-plan §2, DEP-07) keeps what it
owns in one annotation of its own. Its shape is documented for people and tools (docs/quorum-status.md):

    {"updateRevision": "web-7c9f", "observedGeneration": 4,
     "conditions": [{"type": "AllMembersUpdated", "status": "False", "reason": "UpdateInProgress",
                     "message": "waiting for web-1: ...", "lastTransitionTime": "2026-11-25T21:04:05Z"}]}

``updateRevision`` and ``observedGeneration`` say which rollout the conditions speak of (a client compares them
with the set's); times are RFC 3339, as in any Kubernetes condition. Inside rollwise times are float seconds
(``cluster/wire.py``): ``encode`` and ``decode`` convert at this edge. ``decode`` also reads the bare list of
conditions with float times that earlier versions wrote, and drops what it cannot read (anyone who may edit the set
may edit the annotation; the next write replaces it).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.meta import Obj, annotations_of
from rollwise.cluster.wire import format_time, parse_time

__all__ = ["STATUS_ANNOTATION", "QuorumStatus", "decode", "encode", "quorum_status_of"]

STATUS_ANNOTATION = "rollwise.dev/quorum-status"
_TIMES = ("lastTransitionTime", "lastUpdateTime")


@dataclass(frozen=True, slots=True)
class QuorumStatus:
    """The companion's state: conditions with float-second times, and the rollout they speak of."""

    conditions: list[Obj] = field(default_factory=list)
    update_revision: str | None = None
    observed_generation: int | None = None


def encode(state: QuorumStatus) -> str:
    """The annotation's value: sorted keys, RFC 3339 times."""
    conditions = []
    for c in state.conditions:
        out = dict(c)
        for key in _TIMES:
            if isinstance(out.get(key), int | float) and not isinstance(out.get(key), bool):
                out[key] = format_time(float(out[key]))
        conditions.append(out)
    doc: dict[str, Any] = {"conditions": conditions}
    if state.update_revision is not None:
        doc["updateRevision"] = state.update_revision
    if state.observed_generation is not None:
        doc["observedGeneration"] = state.observed_generation
    return json.dumps(doc, sort_keys=True)


def decode(text: str | None, *, types: Collection[str] | None = None) -> QuorumStatus:
    """The state in ``text`` (the annotation's value); empty when absent or unreadable. ``types``: keep only
    conditions of these types."""
    try:
        raw = json.loads(text or "[]")
    except (ValueError, RecursionError):
        return QuorumStatus()
    listed: list[Any]
    if isinstance(raw, list):  # the earlier shape: conditions alone, float times
        listed, revision, generation = raw, None, None
    elif isinstance(raw, dict):
        given = raw.get("conditions")
        listed = given if isinstance(given, list) else []
        revision = raw.get("updateRevision") if isinstance(raw.get("updateRevision"), str) else None
        generation = raw.get("observedGeneration")
        generation = generation if isinstance(generation, int) and not isinstance(generation, bool) else None
    else:
        return QuorumStatus()
    conditions = [c for entry in listed if (c := _condition(entry, types)) is not None]
    return QuorumStatus(conditions=conditions, update_revision=revision, observed_generation=generation)


def _condition(entry: Any, types: Collection[str] | None) -> Obj | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("type"), str) or "status" not in entry:
        return None
    if types is not None and entry["type"] not in types:
        return None
    out = dict(entry)
    for key in _TIMES:
        value = out.get(key)
        if isinstance(value, str):
            try:
                out[key] = parse_time(value)
            except ValueError:
                out.pop(key)
        elif value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            out.pop(key)
    return out


def quorum_status_of(sts: Mapping[str, Any], *, types: Collection[str] | None = None) -> QuorumStatus:
    return decode(annotations_of(sts).get(STATUS_ANNOTATION), types=types)
