"""Member Lease ``spec.holderIdentity``: who a consensus member is and whether it leads (reference §1.4).

etcd-backup-restore renews one Lease per etcd member with ``<memberID>:<clusterID>:<role>`` (older releases:
``<memberID>:<role>``), ids in lower-case hex and the role ``Leader`` or ``Member``. The quorum-aware controller
reads roles from it; the simulator writes it with the ids below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LEADER",
    "MEMBER",
    "MEMBER_OF_LABEL",
    "ROLES",
    "Holder",
    "HolderError",
    "cluster_id",
    "format_holder",
    "lease_role",
    "member_id",
    "parse_holder",
]

LEADER = "Leader"
MEMBER = "Member"
MEMBER_OF_LABEL = "rollwise.dev/member-of"
"""On a member Lease: the name of the set whose member renews it, so a Lease change wakes that set alone."""
ROLES = frozenset({LEADER, MEMBER})

_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Holder:
    """A parsed holderIdentity; ``cluster_id`` is None in the two-part form, ``role`` None for an unknown role."""

    member_id: str
    cluster_id: str | None
    role: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class HolderError:
    """A holderIdentity that does not parse, and why (an error value, never raised)."""

    holder: object
    cause: str

    def __str__(self) -> str:
        return f"holderIdentity {self.holder!r}: {self.cause}"


def parse_holder(identity: object) -> Holder | HolderError:
    """Two or three ``:``-separated parts with a non-empty member id; a role other than Leader/Member is None.

    reference §1.4: etcd-druid errors on any other part count and maps unknown role strings to no role.
    """
    if not isinstance(identity, str):
        return HolderError(holder=identity, cause="missing or not a string")
    parts = identity.split(":")
    if len(parts) == 2:
        mid, cid, role = parts[0], None, parts[1]
    elif len(parts) == 3:
        mid, cid, role = parts
        if not cid:
            return HolderError(holder=identity, cause="empty cluster id")
    else:
        return HolderError(holder=identity, cause="want <memberID>:<clusterID>:<role> or <memberID>:<role>")
    if not mid:
        return HolderError(holder=identity, cause="empty member id")
    return Holder(member_id=mid, cluster_id=cid, role=role if role in ROLES else None)


def lease_role(lease: Mapping[str, Any] | None) -> str | HolderError | None:
    """The role a member Lease states: Leader, Member, None (no Lease, or an unknown role), or the parse error."""
    if lease is None:
        return None
    parsed = parse_holder((lease.get("spec") or {}).get("holderIdentity"))
    if isinstance(parsed, HolderError):
        return parsed
    return parsed.role


def format_holder(member_id: str, cluster_id: str | None, role: str) -> str:
    """``<memberID>:<clusterID>:<role>``, or the older ``<memberID>:<role>`` when ``cluster_id`` is None or empty."""
    return f"{member_id}:{cluster_id}:{role}" if cluster_id else f"{member_id}:{role}"


def _fnv1a64(text: str) -> int:
    h = _FNV64_OFFSET
    for byte in text.encode():
        h = ((h ^ byte) * _FNV64_PRIME) & _MASK64
    return h


def member_id(pod_name: str) -> str:
    """A member id for a pod: FNV-1a 64 of its name as 16 lower-case hex digits (deterministic across runs)."""
    return format(_fnv1a64(pod_name), "016x")


def cluster_id(set_name: str) -> str:
    """A cluster id for a set: FNV-1a 64 of its name as 16 lower-case hex digits (deterministic across runs)."""
    return format(_fnv1a64(set_name), "016x")
