"""The lab's figures from raw records, as pure functions: write outages, elections, leader moves.

reference §4 item 5: an outage is a *no-commit gap*, the time between consecutive successful write completions,
counted only above 0.2 s (at 20 writes/s a healthy cluster commits every 50 ms). It does not depend on the client
deadline, unlike counting failed attempts, which under-reports each outage by up to that deadline.

A lost write is another thing than an outage: a write the store acknowledged that is not there when the writer
reads every acknowledged write back after the rollout. A refused write is one the store never acknowledged
(refused, reset, or unanswered by the deadline on every member tried): the client knows it failed, and may retry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

__all__ = ["GAP_THRESHOLD_SECONDS", "StatusSample", "WriteRecord", "elections", "leader_moves", "lost_writes",
           "no_commit_gaps", "refused_writes"]

GAP_THRESHOLD_SECONDS = 0.2


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteRecord:
    start: float
    end: float
    ok: bool  # acknowledged by the store
    endpoint: str = ""
    seq: int = 0  # the writer's own number for the write: what it reads back
    receipt: int = 0  # where the store says it put the write, when it says (a NATS stream's sequence number)


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusSample:
    """One member's answer to ``/v3/maintenance/status`` at ``t`` (``leader`` 0: it knows none)."""

    t: float
    member: str
    leader: int
    term: int


def no_commit_gaps(records: Iterable[WriteRecord], *, since: float, until: float,
                   threshold: float = GAP_THRESHOLD_SECONDS) -> list[tuple[float, float]]:
    """Spans inside [since, until] longer than ``threshold`` with no successful write completion.

    The window's edges count as commit instants, so a run that starts or ends in an outage counts that part of it.
    """
    if until <= since:
        return []
    commits = sorted(r.end for r in records if r.ok and since < r.end < until)
    edges = [since, *commits, until]
    return [(a, b) for a, b in pairwise(edges) if b - a > threshold]


def lost_writes(records: Iterable[WriteRecord], found: Iterable[int]) -> list[int]:
    """The writer's numbers of the acknowledged writes that the read-back did not find, in order."""
    present = set(found)
    return sorted({r.seq for r in records if r.ok} - present)


def refused_writes(records: Iterable[WriteRecord], *, since: float, until: float) -> int:
    """Writes sent inside [since, until] that the store never acknowledged."""
    return sum(1 for r in records if not r.ok and since <= r.start <= until)


def elections(samples: Sequence[StatusSample], *, since: float, until: float) -> int:
    """Raft term increments in the window: the highest term any member reported by ``until`` minus the highest by
    ``since`` (reference §2: the term rises by one per election; a member that misses one catches up later)."""
    before = max((s.term for s in samples if s.t <= since), default=None)
    during = max((s.term for s in samples if s.t <= until), default=None)
    if during is None:
        return 0
    if before is None:
        before = min(s.term for s in samples if s.t <= until)
    return max(0, during - before)


def leader_moves(samples: Sequence[StatusSample], *, since: float, until: float) -> int:
    """How often the leader changed to another member within the window: the leader a sample names, taken from the
    highest term seen so far (older-term reports are stale), counted when it differs from the previous one."""
    ordered = sorted(samples, key=lambda s: s.t)
    best_term, leader, moves = -1, 0, 0
    for s in ordered:
        if s.t > until:
            break
        if s.leader == 0 or s.term < best_term:
            continue
        best_term = s.term
        if s.leader != leader:
            if leader != 0 and s.t > since:
                moves += 1
            leader = s.leader
    return moves

