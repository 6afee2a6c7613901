"""What the quorum model sees of a member pod (``rollwise.kubelet.quorum``): alive, since when, terminating, and the
leader-transfer request its pod carries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.identity import ordinal_of
from rollwise.api.leader_transfer import transfer_target
from rollwise.api.meta import deletion_timestamp, name_of, uid_of

__all__ = ["MemberObservation", "observe_pod"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberObservation:
    """What the loop sees of one member pod now; ``member_id`` "" → ``rollwise.api.leases.member_id(pod)``."""

    pod: str
    ordinal: int
    alive: bool
    started_at: float | None = None  # the running container's startedAt (None: take the time first seen)
    terminating: bool = False
    uid: str = ""
    member_id: str = ""
    transfer_to: str | None = None  # the pod's leader-transfer request (``rollwise.api.leader_transfer``)


def observe_pod(pod: Mapping[str, Any], *, container: str | None = None, member_id: str = "") -> MemberObservation:
    """A member as its pod shows it: alive while ``container`` (default: the first in the spec) is running."""
    wanted = container
    if wanted is None:
        spec_containers = pod.get("spec", {}).get("containers") or ()
        wanted = str(spec_containers[0].get("name", "")) if spec_containers else None
    statuses = [cs for cs in (pod.get("status") or {}).get("containerStatuses") or () if isinstance(cs, Mapping)]
    match = next((cs for cs in statuses if wanted is None or cs.get("name") == wanted), None)
    running = ((match or {}).get("state") or {}).get("running")
    started = running.get("startedAt") if isinstance(running, Mapping) else None
    return MemberObservation(pod=name_of(pod), ordinal=ordinal_of(pod), alive=running is not None,
                             started_at=None if started is None else float(started),
                             terminating=deletion_timestamp(pod) is not None, uid=uid_of(pod), member_id=member_id,
                             transfer_to=transfer_target(pod))
