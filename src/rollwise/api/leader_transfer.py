"""The leader-transfer hook: how the quorum-aware controller asks a member pod to hand leadership over.

Role-aware operators move leadership before they restart a leader (TiDB's evict-leader, etcd's ``move-leader``);
rollwise asks through the pod itself, so any application's agent can answer (docs/quorum-aware.md, "Leader
transfer"). On the leader's pod the controller writes:

- ``rollwise.dev/transfer-leadership-to: <pod>``: the member that should lead next (an updated, ready follower);
- ``rollwise.dev/transfer-leadership-requested-at: <seconds>``: when it asked, in the controller's clock (epoch
  seconds on a cluster, virtual seconds in the simulator), so that a restarted controller keeps the same deadline.

The agent moves leadership (etcd: ``etcdctl move-leader <member id>`` against the leader) and the member Leases show
the new leader; the controller then deletes the old leader as a follower. The controller never waits for ever: after
the set's timeout it deletes the leader as it would without the hook, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["REQUESTED_AT_ANNOTATION", "TRANSFER_TO_ANNOTATION", "requested_at", "transfer_target"]

TRANSFER_TO_ANNOTATION = "rollwise.dev/transfer-leadership-to"
REQUESTED_AT_ANNOTATION = "rollwise.dev/transfer-leadership-requested-at"


def _annotations(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    notes = (pod.get("metadata") or {}).get("annotations")
    return notes if isinstance(notes, Mapping) else {}


def transfer_target(pod: Mapping[str, Any]) -> str | None:
    """The pod named by the pod's transfer request, or None when it carries none (or not a name)."""
    target = _annotations(pod).get(TRANSFER_TO_ANNOTATION)
    return target if isinstance(target, str) and target else None


def requested_at(pod: Mapping[str, Any]) -> float | None:
    """When the pod's transfer request was made; None when absent or not a finite number."""
    raw = _annotations(pod).get(REQUESTED_AT_ANNOTATION)
    try:
        value = float(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None
