"""The members of a quorum-aware set as the controller sees them: revision, participation, health and role.

seed 001 (DEP-07) "Determining Whether a Pod Needs Updating" and "Health Assessment"; reference §1.3, §1.4.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.identity import ordinal_of, ordinal_range, parent_and_ordinal, pod_name, revision_of
from rollwise.api.leases import LEADER, MEMBER, HolderError, lease_role
from rollwise.api.meta import Obj, labels, name_of, selector_matches
from rollwise.api.predicates import available_at, classify_container, is_available, is_terminating, status_of
from rollwise.api.role_probe import LEADER as PROBED_LEADER
from rollwise.api.role_probe import UNKNOWN, read_role
from rollwise.controllers.quorum.settings import Settings
from rollwise.controllers.view import SetView

__all__ = ["Member", "Roster", "container_state", "roles_untold", "roster_of"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Member:
    """One in-range member pod. ``health`` is classify_container's Dead/Transient/Alive, or None (Unknown)."""

    pod: Obj
    name: str
    ordinal: int
    outdated: bool
    participating: bool
    settled: bool
    """Participating, and available: Ready for longer than the set's minReadySeconds (reference §5.7)."""
    available_at: float | None
    """When a participating member that has not settled yet becomes available (the controller's wake-up)."""
    health: str | None
    state: str
    """The member container's state in plain words, for messages."""
    leader: bool
    role: str
    """How the role was read, in plain words (``lease web-0 says Member``)."""
    lease: str | None
    """The member's Lease name when roles come from Leases, else None."""
    role_known: bool = True
    """False when a role probe could not tell this member's role (no answer, garbage, stale): it might lead."""
    claims_leadership: bool = False
    """Its own clear, fresh answer to the role probe says it leads: it still leads whatever its readiness says (NATS'
    ``/healthz`` fails on a voting meta leader while a peer catches up). Not counted as participating for the
    quorum, whose count stays the Ready members', but never replaced as a member that contributes nothing."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Roster:
    """The set's members by ordinal, plus what the top gate looks at: terminating pods and missing ordinals."""

    update_revision: str
    replicas: int
    members: tuple[Member, ...]
    terminating: tuple[str, ...]
    """Every matching pod with a deletionTimestamp, any ordinal, by ordinal."""
    missing: tuple[str, ...]
    """Pod names of in-range ordinals that have no pod."""
    generation: int = 0
    """The set's ``metadata.generation``, 0 when absent (a hand-built object)."""
    observed_generation: int = 0
    """The generation ``status`` was computed for (``status.observedGeneration``, 0 when absent)."""
    now: float = 0.0
    """The view's time (a leader-transfer request's deadline is measured against it)."""
    roles_untold: str | None = None
    """Why the leader cannot be told from the role probe's answers (None: it can, or roles are not probed)."""

    @property
    def leader_claimed(self) -> bool:
        """Some participating member, not terminating, says (or its Lease or label says) it leads; or a member says so
        itself, Ready or not."""
        return any(m.leader and (m.participating or m.claims_leadership) and not is_terminating(m.pod)
                   for m in self.members)

    @property
    def outdated(self) -> tuple[Member, ...]:
        return tuple(m for m in self.members if m.outdated)

    @property
    def updated(self) -> tuple[Member, ...]:
        return tuple(m for m in self.members if not m.outdated)

    @property
    def participating(self) -> int:
        """Participating members not already on their way out: a terminating one is a deletion in flight."""
        return sum(1 for m in self.members if m.participating and not is_terminating(m.pod))

    @property
    def quorum(self) -> int:
        """floor(replicas/2)+1 voting members (reference §2)."""
        return self.replicas // 2 + 1


def _member_status(pod: Mapping[str, Any], container: str) -> Mapping[str, Any] | None:
    for cs in _objects(status_of(pod).get("containerStatuses")):
        if cs.get("name") == container:
            return cs
    return None


def container_state(pod: Mapping[str, Any], container: str) -> str:
    """The member container's state in words: ``container etcd is CrashLoopBackOff``, ``... is running but not
    ready``. Stable while the state is (no times), so a condition quoting it does not churn."""
    cs = _member_status(pod, container)
    if cs is None:
        return f"container {container} has no status yet"
    state = cs.get("state")
    state = state if isinstance(state, dict) else {}
    if "running" in state:
        return f"container {container} is " + ("running and ready" if cs.get("ready") else "running but not ready")
    if "terminated" in state:
        return f"container {container} terminated ({_reason(state['terminated'], 'Error')})"
    if "waiting" in state:
        return f"container {container} is {_reason(state['waiting'], 'waiting')}"
    return f"container {container} has no state"


def _role(view: SetView, pod: Obj, settings: Settings) -> tuple[bool, str, str | None, bool]:
    """(is leader, how it was read, lease name, known). From Leases or a label: missing or unreadable → follower, as
    etcd-druid (reference §1.4). From a role probe: anything but a clear, fresh answer is unknown (roles_untold)."""
    name = name_of(pod)
    if settings.probe is not None:
        probed = read_role(settings.probe, view.probes.get(name), pod=name, now=view.now)
        return probed.kind == PROBED_LEADER, probed.why, None, probed.kind != UNKNOWN
    if settings.role_label is not None:
        value = labels(pod).get(settings.role_label)
        if value is None:
            return False, f"no label {settings.role_label}, treated as follower", None, True
        leader = value == settings.leader_value
        return leader, f"label {settings.role_label}={value}", None, True
    lease = settings.lease_name(name)
    role = lease_role(view.leases.get(lease))
    if role == LEADER:
        return True, f"lease {lease} says {LEADER}", lease, True
    if role == MEMBER:
        return False, f"lease {lease} says {MEMBER}", lease, True
    if isinstance(role, HolderError):
        return False, f"lease {lease} unreadable ({role}), treated as follower", lease, True
    if lease not in view.leases:
        return False, f"lease {lease} missing, treated as follower", lease, True
    return False, f"lease {lease} names no known role, treated as follower", lease, True


def roles_untold(members: list[Member]) -> str | None:
    """Why the leader cannot be told from probed roles, or None when it can: every participating member (not
    terminating) answered clearly and freshly, and exactly one says it leads. A member that answered "not the
    leader" is still a follower when this says why not; the others might be the leader (DEP-07 step 4, follower
    before leader: steps.py deletes none of them while the leader cannot be told, and no member at all while none
    says it leads)."""
    voters = [m for m in members if (m.participating or m.claims_leadership) and not is_terminating(m.pod)]
    unknown = [f"{m.name} ({m.role})" for m in voters if not m.role_known]
    if unknown:
        return "role unknown: " + ", ".join(unknown)
    claims = [m.name for m in voters if m.leader]
    if len(claims) > 1:
        return f"{len(claims)} members say they lead: {', '.join(claims)}"
    if not claims and voters:
        return "no participating member says it leads"
    return None


def roster_of(view: SetView, settings: Settings) -> Roster:
    """Pods matching the set's selector and named ``<set>-<ordinal>`` (reference §1.2: by selector, not owner)."""
    sts = view.set
    set_name = name_of(sts)
    update = str((sts.get("status") or {}).get("updateRevision") or "")
    selector = (sts.get("spec") or {}).get("selector")
    pods = []
    for pod in view.pods:
        parent, ordinal = parent_and_ordinal(name_of(pod))
        # pod_name() round trip: "web-01" parses to ordinal 1 but is not the name the set gives ordinal 1.
        if parent == set_name and ordinal >= 0 and name_of(pod) == pod_name(set_name, ordinal) \
                and selector_matches(selector, labels(pod)):
            pods.append(pod)
    pods.sort(key=ordinal_of)
    span = ordinal_range(sts)
    by_ordinal = {ordinal_of(pod): pod for pod in pods}
    min_ready = float((sts.get("spec") or {}).get("minReadySeconds") or 0)
    members = []
    for pod in pods:
        if ordinal_of(pod) not in span:
            continue  # condemned by a scale-down: the StatefulSet controller removes it
        cs = _member_status(pod, settings.container)
        leader, role, lease, known = _role(view, pod, settings)
        participating = bool(cs is not None and cs.get("ready") is True)
        settled = participating and (min_ready <= 0 or is_available(pod, min_ready, view.now))
        members.append(Member(
            pod=pod, name=name_of(pod), ordinal=ordinal_of(pod), outdated=revision_of(pod) != update,
            participating=participating, settled=settled,
            available_at=None if settled or not participating else available_at(pod, min_ready),
            health=classify_container(pod, settings.container), state=container_state(pod, settings.container),
            leader=leader, role=role, lease=lease, role_known=known,
            claims_leadership=settings.probe is not None and leader and known,
        ))
    return Roster(
        generation=int((sts.get("metadata") or {}).get("generation") or 0),
        observed_generation=int((sts.get("status") or {}).get("observedGeneration") or 0),
        now=view.now,
        update_revision=update,
        replicas=len(span),
        members=tuple(members),
        terminating=tuple(name_of(pod) for pod in pods if is_terminating(pod)),
        missing=tuple(pod_name(set_name, o) for o in span if o not in by_ordinal),
        roles_untold=roles_untold(members) if settings.probe is not None else None,
    )


def _objects(value: object) -> list[Mapping[str, Any]]:
    """The object entries of a status list; anything else has none (a pod's status may hold any shape)."""
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def _reason(detail: object, default: str) -> str:
    reason = detail.get("reason") if isinstance(detail, dict) else None
    return str(reason) if reason else default
