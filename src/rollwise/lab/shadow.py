"""The quorum model replayed on a real run's own pod timeline: what the model predicts for exactly what the real
members lived through.

A lab run's model column (``run_model``) is a whole simulation: the model's kubelet stops a process in a fixed
``termination_seconds`` and starts one in ``start_seconds``, while real etcd exits 0.15-1.15 s after SIGTERM (its
peer listener waits up to a second for open streams) and boots in its own time. Those are the kubelet's timings, not
the quorum model's. The shadow takes them from the run itself: every change of a member pod (deletion requested,
process exited, process started) is recorded as the model's observations at that instant and replayed through
``rollwise.kubelet.quorum.step``. What is left to compare is the model's own rules: when a member stops serving,
what counts as an election, how long one takes, when leadership must move.

Inputs come from the real run where real etcd draws them at random: the leader when the template changes (whichever
member won the last election before it), the winner of each election among members with equally complete logs (the
first whose randomised timer fires) and the target of each hand-over on SIGTERM (etcd's longest-connected voter:
among members up since the same start, the order their peer streams came up). The model's k-th new term goes to
the real k-th new term's leader, when the model has it among its candidates. Where a store draws its election timer
at random too (NATS: 4-9 s, and a split vote draws again), the instant of each election the model schedules is the
run's (``RunDraws.election_at``): the model decides whether an election is needed and from when, the run says which
timer fired. Every other count and time is the model's.

The writer's member is a draw of the same kind: a client talks to one member until that one fails it. Where a
store's member stops serving its clients at SIGTERM but lets them go only at its exit (ZooKeeper: its sessions hang
until the JVM is gone, and the client then reconnects elsewhere), the writer commits nothing from the deletion of
the member it is attached to until that member's exit, whoever leads (``client_stalls``); the member is the one
the real writer's last commit before the deletion went through.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from rollwise.api.identity import ordinal_of
from rollwise.api.meta import Obj, name_of
from rollwise.api.predicates import is_ready
from rollwise.kubelet.quorum import LEADER_CHANGED, MemberObservation, QuorumParams, QuorumState, observe_pod, step
from rollwise.lab.figures import GAP_THRESHOLD_SECONDS, StatusSample

__all__ = ["RunDraws", "ShadowFigures", "ShadowRecorder", "Snapshot", "client_stalls", "group_samples", "merge_spans",
           "replay"]

# A hand-over's successor shows in the sampled leaders this soon after the deletion (NATS: 0.03-0.1 s).
HAND_OVER_SECONDS = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ShadowFigures:
    """The model's figures on the real timeline, counted as the real ones are, from ``since`` to ``until``."""

    outage_seconds: float  # time without a leader (quorum lost, electing or handing over)
    longest_gap_seconds: float
    elections: int  # new terms: elections and hand-overs
    leader_moves: int


# (when, the members as the model sees them, the member pods real readiness shows Ready)
Snapshot = tuple[float, tuple[MemberObservation, ...], frozenset[str]]


@dataclass(slots=True)
class ShadowRecorder:
    """Records the member pods as the model sees them at every change of one of them."""

    pods: Callable[[], Sequence[Obj]]  # the set's pods now
    replicas: int
    snapshots: list[Snapshot] = field(default_factory=list)

    def observe(self, at: float) -> None:
        members = [p for p in self.pods() if ordinal_of(p) < self.replicas]
        obs = tuple(sorted((observe_pod(p) for p in members), key=lambda o: (o.ordinal, o.pod)))
        ready = frozenset(name_of(p) for p in members if is_ready(p))
        if not self.snapshots or self.snapshots[-1][1:] != (obs, ready):
            self.snapshots.append((at, obs, ready))


def _real_terms(samples: Sequence[StatusSample], pods: Mapping[int, str]) -> dict[int, tuple[float, str]]:
    """Each raft term's leader as the members reported it (member id -> pod), and when it was first reported."""
    leaders: dict[int, tuple[float, str]] = {}
    for s in sorted(samples, key=lambda s: s.t):
        if s.leader != 0 and s.leader in pods:
            leaders.setdefault(s.term, (s.t, pods[s.leader]))
    return leaders


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDraws:
    """A real run's random draws, for the model to follow (``kubelet.quorum.Draws``).

    The winner: the model's k-th new term goes to the real k-th new term's leader. For a group whose terms are not
    seen (``by_time``: NATS' stream, whose terms ``group_samples`` counts from leader changes, so a term nobody won
    is missing), the leader first reported from the term's start on instead.

    The election's instant, where the store draws its election timer at random (``window`` > 0: NATS' followers
    wait 4-9 s, ``raft.go``): the first real new leader reported within ``window`` after the model's cause for the
    election. The model still decides whether and from when an election is needed; only the timer's draw is the
    run's, as etcd's winner is. With no real leader in that window the model's own time stands.
    """

    terms: Mapping[int, tuple[float, str]]
    base: int  # the real term at the replay's start
    begun: int  # the terms the model had begun by then
    window: float = 0.0
    by_time: bool = False
    leaders: tuple[tuple[float, str], ...] = field(init=False)
    """The new terms' leaders after the start, by when each was first reported."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "leaders", tuple(sorted(at for term, at in self.terms.items() if term > self.base)))

    def winner(self, terms: int, candidates: Sequence[str], at: float) -> str | None:
        if self.by_time:
            return next((pod for t, pod in self.leaders if at <= t <= at + HAND_OVER_SECONDS), None)
        got = self.terms.get(self.base + 1 + terms - self.begun)
        return None if got is None else got[1]

    def election_at(self, cause: float, planned: float) -> float | None:
        if self.window <= 0:
            return None
        return next((t for t, _ in self.leaders if cause <= t <= cause + self.window), None)


def group_samples(leaders: Sequence[tuple[float, str]], pods: Mapping[int, str]) -> list[StatusSample]:
    """A group whose members report its leader but no term (NATS' stream, from ``$JS.API.STREAM.INFO``) as status
    samples: each change to another leader is a new term, so the replay's k-th new term goes to the k-th new leader."""
    ids = {pod: member for member, pod in pods.items()}
    out: list[StatusSample] = []
    term, last = 1, ""
    for t, pod in sorted(leaders):
        if pod not in ids:
            continue
        if last and pod != last:
            term += 1
        last = pod
        out.append(StatusSample(t=t, member="group", leader=ids[pod], term=term))
    return out


def client_stalls(snapshots: Sequence[Snapshot], writer: Sequence[tuple[float, str]], *, since: float,
                  until: float) -> list[tuple[float, float]]:
    """The spans in which the writer waits on a member that is stopping: from the deletion of the member its last
    commit went through (``writer``: (commit time, member pod), in time order) to that member's exit."""
    stalls: list[tuple[float, float]] = []
    stopping: dict[str, float] = {}
    before: dict[str, MemberObservation] = {}
    for t, obs, _ in snapshots:
        now = {o.pod: o for o in obs}
        for pod, began in list(stopping.items()):
            if pod not in now or not now[pod].alive or now[pod].uid != before[pod].uid:
                del stopping[pod]
                if began < until and t > since:
                    stalls.append((max(began, since), min(t, until)))
        for pod, o in now.items():
            if o.alive and o.terminating and pod not in stopping and not (pod in before and before[pod].terminating):
                attached = [member for at, member in writer if at <= t]
                if attached and attached[-1] == pod:
                    stopping[pod] = t
        before = {**before, **now}
    return stalls


def replay(snapshots: Sequence[Snapshot], samples: Sequence[StatusSample], pods: Mapping[int, str],
           params: QuorumParams, *, replicas: int, since: float, until: float,
           writer: Sequence[tuple[float, str]] = (), election_window: float = 0.0,
           by_time: bool = False) -> ShadowFigures:
    """Run the model over the recorded observations, with the real leader at ``since`` and the real draws after it
    (``RunDraws``: the leaders of the new terms; with ``election_window``, the elections' instants). With
    ``writer`` (the member each real commit went through), the writer's stalls on a stopping member count too."""
    terms = _real_terms(samples, pods)
    base = max((s.term for s in samples if s.t <= since), default=0)
    state, last, ready = QuorumState.initial(), tuple[MemberObservation, ...](), frozenset[str]()
    for t, obs, ready in [s for s in snapshots if s[0] <= since]:  # noqa: B007 - the last one is wanted after
        state, last = step(obs, state, params, replicas=replicas, now=t).state, obs
    state = step(last, state, params, replicas=replicas, now=since).state
    leader = terms[base][1] if base in terms else None
    if leader is not None and state.quorum_up and any(o.pod == leader and o.alive for o in last):
        state = replace(state, leader=leader, election_at=None, leaderless_since=None)
    draws = RunDraws(terms=terms, base=base, begun=len(state.elections), window=election_window, by_time=by_time)
    begun = draws.begun

    changes: list[tuple[float, str | None]] = []
    for t, seen, now_ready in [*(s for s in snapshots if since < s[0] <= until), (until, None, None)]:
        obs = last if seen is None else seen
        if now_ready is not None and now_ready - ready and state.election_at is not None \
                and state.election_at > t and election_window <= 0:
            # A member turned Ready: its probe, a linearizable read, was served by a leader, so real etcd has
            # elected already; the model's pending election happens now rather than after the next deletion. (With
            # the elections' instants drawn from the run, those are the better evidence.)
            state = replace(state, election_at=t)
        ready = ready if now_ready is None else now_ready
        out = step(obs, state, params, replicas=replicas, now=t, draws=draws)
        state, last = out.state, obs
        changes += [(e.t, e.pod) for e in out.events if e.type == LEADER_CHANGED]
    spans: list[tuple[float, float]] = []
    lost_at: float | None = None
    moves = 0
    for t, pod in changes:
        if pod is None:
            lost_at = t if lost_at is None else lost_at
            continue
        if lost_at is not None:
            spans.append((lost_at, t))
            lost_at = None
        moves += leader is not None and pod != leader
        leader = pod
    if lost_at is not None:
        spans.append((lost_at, until))
    # A leader syncing a rejoining member commits nothing either (ZooKeeper): the same outage as a leaderless span.
    stalls = client_stalls(snapshots, writer, since=since, until=until)
    # Quorum lost is no commit too, even where the leader holds its term through the loss (NATS).
    lost = [*state.outages, *([(state.lost_since, until)] if state.lost_since is not None else [])]
    gaps = merge_spans([*spans, *stalls, *((max(a, since), min(b, until)) for a, b in lost if a < until and b > since),
                   *((max(a, since), min(b, until)) for a, b in state.pauses if a < until and b > since)])
    # Counted as the real outage is (figures.no_commit_gaps): a span no longer than the threshold is not one, since a
    # writer at 20 writes/s cannot tell it from the time between two commits.
    return ShadowFigures(outage_seconds=round(sum(b - a for a, b in gaps if b - a > GAP_THRESHOLD_SECONDS), 3),
                         longest_gap_seconds=round(max((b - a for a, b in gaps), default=0.0), 3),
                         elections=sum(1 for t in state.elections[begun:] if since < t <= until), leader_moves=moves)


def merge_spans(spans: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Overlapping or touching spans merged, in time order."""
    merged: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged
