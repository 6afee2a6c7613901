"""The quorum model's memory and figures: what ``kubelet/quorum.py``'s ``step`` keeps between calls, the events it
reports, and the outage and election figures counted from a state. Plain records and arithmetic over them; the rules
that change a state are in ``quorum.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "LEADER_CHANGED",
    "QUORUM_LOST",
    "QUORUM_RESTORED",
    "Draws",
    "LeaseWrite",
    "MemberRecord",
    "QuorumEvent",
    "QuorumState",
    "QuorumStep",
    "figures",
    "leaderless_seconds",
]

QUORUM_LOST, QUORUM_RESTORED, LEADER_CHANGED = "QuorumLost", "QuorumRestored", "LeaderChanged"

class Draws(Protocol):
    """What a real cluster drew at random, for the model to follow (``rollwise.lab.shadow`` replays a run): who
    takes a new term, and when an election the model has scheduled happens. None keeps the model's own choice."""

    def winner(self, terms: int, candidates: Sequence[str], at: float) -> str | None:
        """The leader of the new term begun at ``at`` (``terms``: how many the model has begun before it)."""
        ...

    def election_at(self, cause: float, planned: float) -> float | None:
        """When the election the model planned for ``planned`` happens, its cause (a leader lost, quorum formed)
        at ``cause``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberRecord:
    """The model's memory of one member incarnation: identity, liveness and its readiness probe."""

    pod: str
    ordinal: int
    uid: str
    member_id: str
    alive: bool
    terminating: bool
    started_at: float | None  # as observed: with uid, the incarnation key
    anchor: float = 0.0  # probe ticks at anchor + initial delay + k * period
    ready: bool = False
    failures: int = 0  # consecutive failed ticks while Ready
    next_tick: int = 0  # index of the next tick not yet evaluated
    transfer_to: str | None = None  # the request last seen on the pod (a new one is acted on once)


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseWrite:
    """A holderIdentity the member's backup-restore sidecar will write at ``due``."""

    due: float
    lease: str
    holder: str


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumEvent:
    """A run-record event: ``QuorumLost``, ``QuorumRestored`` or ``LeaderChanged`` (``pod`` None: no leader)."""

    t: float
    type: str
    pod: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumState:
    """Everything the model remembers between calls; start from ``QuorumState.initial()``."""

    at: float | None = None  # time of the last call
    members: tuple[MemberRecord, ...] = ()  # by (ordinal, pod)
    quorum_up: bool = False
    lost_since: float | None = None  # open outage
    leader: str | None = None
    election_at: float | None = None
    leases: tuple[tuple[str, str], ...] = ()  # lease name → holderIdentity as written, by name
    pending: tuple[LeaseWrite, ...] = ()  # in due order
    elections: tuple[float, ...] = ()
    outages: tuple[tuple[float, float], ...] = ()  # closed (lost, restored) intervals
    transfer: tuple[str, float] | None = None  # a requested hand-over under way: (target pod, when it leads)
    leaderless_since: float | None = None  # open leaderless span
    leaderless: tuple[tuple[float, float], ...] = ()  # closed (leader lost, next leader) intervals
    departing: str | None = None  # a leader that stopped serving at SIGTERM and has not exited yet
    syncs: tuple[tuple[str, float], ...] = ()  # rejoining members the leader will sync: (pod, when), in time order
    pauses: tuple[tuple[float, float], ...] = ()  # commit pauses while the leader synced a rejoining member

    @classmethod
    def initial(cls) -> QuorumState:
        """The state before any member was seen."""
        return cls()


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumStep:
    """One call's answer: new ``state``, per-pod readiness now, the leader, Lease writes due (changes only), events
    (in time order, possibly before ``now`` after a late call) and the next time to call (None: only on change)."""

    state: QuorumState
    ready: Mapping[str, bool]
    leader: str | None
    leases: Mapping[str, str]
    events: tuple[QuorumEvent, ...]
    wake_at: float | None


def figures(state: QuorumState, now: float, *, since: float = 0.0) -> tuple[float, int]:
    """(quorum_loss_seconds, leader_elections) counted from ``since`` to ``now``; an open outage counts to ``now``."""
    lost = _overlap([*state.outages, *([(state.lost_since, now)] if state.lost_since is not None else [])], since, now)
    return lost, sum(1 for t in state.elections if since <= t <= now)


def leaderless_seconds(state: QuorumState, now: float, *, since: float = 0.0) -> float:
    """Seconds without a leader from ``since`` to ``now`` (an open span counts to ``now``): every write waits."""
    return _overlap([*state.leaderless, *([(state.leaderless_since, now)] if state.leaderless_since is not None
                                          else [])], since, now)


def _overlap(spans: Sequence[tuple[float, float]], since: float, now: float) -> float:
    return sum(max(0.0, min(end, now) - max(start, since)) for start, end in spans)
