"""The quorum model: a pure model of a consensus cluster (etcd-like) whose members are a StatefulSet's pods.

The simulation loop calls ``step`` with what it sees of each member pod (``MemberObservation``, e.g. from
``observe_pod``) whenever a member pod changes and at the returned ``wake_at``; the model answers with the readiness
the kubelet must report, the Lease writes due and the events. It holds no store and no clock.

Rules (spec "Quorum model"; reference §1.4, §1.7, §2):

- A member is *alive* while its container runs; a terminating pod's container runs until the pod is removed. A new
  uid or a new container ``startedAt`` is a new incarnation: the old one stopped at that instant.
- *Participating* = alive and at least ``floor(replicas/2)+1`` members voting; a member stops voting when its
  deletion is requested (etcd leaves raft at SIGTERM, before its process exits). The caller passes exactly the member
  pods (ordinals in the set's range); pods it leaves out are treated as removed.
- Leader: when there is none, quorum holds and a candidate exists, an election is held ``election_seconds`` after
  that became true (the followers' timeout), or ``join_election_seconds`` when quorum has just formed (a booting
  etcd member advances its election ticks and campaigns once started: 0.48-1.35 s under ``rollwise lab etcd``).
  Candidates: participating members not terminating. The winner: the longest-running (earliest start), ties to the
  lowest ordinal (etcd's is random; ``step``'s ``elect`` replays real draws, hand-over targets too). Losing quorum
  removes the leader and cancels a pending election.
- Graceful deletion: when the model first sees the leader terminating, leadership passes at once to the candidate
  an election would pick (etcd's TransferLeadership on SIGTERM targets the longest-connected voter, §2: ≈100 ms, no
  gap), in a new term that counts as an election, as raft's does. The leaving leader votes for its successor, so
  this happens whenever they and the other voters make a majority, even when the departure then loses quorum: the
  successor leads for an instant and is lost with it (real etcd: a term and a leader move, then no commit). With
  no candidate the leader stays until it stops; ``shutdown_transfer`` false: it always leads until it stops.
  ``shutdown_transfer_needs_quorum`` (NATS): when the members left without the leader are short of a quorum, the
  successor's term begins (it counts as an election) but nobody leads in it; the leader is lost with its quorum.
  ``leader_holds_quorum_loss_seconds`` (NATS): a leader that stays up keeps leading through a quorum loss that
  short (no election when quorum returns; writes stop all the same).
- Requested transfer (``rollwise.api.leader_transfer``): when the leader's pod newly names a voting member, the
  leader steps down at once and that member leads ``transfer_seconds`` later (etcd's move-leader: proposals stop
  while it runs, and the new leader's term is a new term, so it counts as an election). A target that stops or
  stops voting meanwhile cancels it, and an election follows as after any loss.
- Other stores (``QuorumParams``, set per store by ``lab/stores.py``): without ``majority_writes`` one voting
  member is a quorum (Patroni: the DCS, not the members, decides who leads). With ``leader_stops_at_sigterm`` a
  leader not handing over stops leading at its deletion request, and the election follows ``election_seconds``
  after it exits (ZooKeeper), or after its deletion request with ``election_at_sigterm`` (Patroni). With
  ``rejoin_sync_seconds`` a member starting while quorum holds is synced by the leader ``join_seconds`` later, if
  one leads then: no commits for that long (``QuorumState.pauses``).
- Readiness: etcd-druid's probe (``quorum_probe``), a linearizable read (quorum and a leader); none once stopped.
- Leases (one per member, named after the pod): ``<memberID>:<clusterID>:<Leader|Member>`` (``<memberID>:<role>``
  when no cluster id is given, the spec's older two-part form; ``rollwise.api.leases`` formats it and supplies the
  member id when the observation has none), written ``lease_lag_seconds`` after the role changes.
  Only alive members write; a write still pending when its member stops is dropped (backup-restore renews only while
  etcd answers), so a stopped member keeps its last content, possibly a stale ``Leader``.
- Events: ``QuorumLost``/``QuorumRestored`` only once quorum first formed (bootstrap is not a loss);
  ``LeaderChanged`` with the new leader, or None when the leader stops or quorum is lost. At one instant QuorumLost
  comes before LeaderChanged(None).
- Time: observations take effect at ``now``. A late call first fires what fell due since the previous call under
  the members as they were then (elections, probe ticks, lease writes, in time order, each at its own time), then
  applies the new observations, then fires what is due at ``now``. A probe tick that cannot change anything is
  skipped, not scheduled, so a steady cluster asks for no wake-ups. ``replicas == 0`` dissolves the cluster: no
  quorum, no leader, and no loss is counted.
- Figures: the state keeps every election time, outage and leaderless span, so ``figures`` and ``leaderless_seconds``
  count from any start (``since``). The bootstrap election counts when it happens at or after ``since``; a
  leaderless span runs from a leader's loss to the next leader (bootstrap is not one; dissolving ends it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from rollwise.api import leases
from rollwise.kubelet.quorum_observe import MemberObservation, observe_pod
from rollwise.kubelet.quorum_probe import (
    QuorumParams,
    first_tick_index,
    parse_quorum_params,
    probe_tick,
    tick_at,
    tick_matters,
)
from rollwise.kubelet.quorum_state import (
    LEADER_CHANGED,
    QUORUM_LOST,
    QUORUM_RESTORED,
    Draws,
    LeaseWrite,
    MemberRecord,
    QuorumEvent,
    QuorumState,
    QuorumStep,
    figures,
    leaderless_seconds,
)

__all__ = [
    "LEADER_CHANGED",
    "QUORUM_LOST",
    "QUORUM_RESTORED",
    "Draws",
    "MemberObservation",
    "MemberRecord",
    "QuorumEvent",
    "QuorumParams",
    "QuorumState",
    "QuorumStep",
    "figures",
    "leaderless_seconds",
    "observe_pod",
    "parse_quorum_params",
    "step",
]


class _Work:
    """The mutable scratch copy of a state for one ``step`` call (never escapes it)."""

    def __init__(self, state: QuorumState, params: QuorumParams, cluster_id: str | None, draws: Draws | None) -> None:
        self.p, self.cluster_id, self.draws = params, cluster_id, draws
        self.members = {m.pod: m for m in state.members}
        self.quorum_up, self.lost_since = state.quorum_up, state.lost_since
        self.leader, self.election_at = state.leader, state.election_at
        self.leases, self.pending = dict(state.leases), list(state.pending)
        self.elections, self.outages = list(state.elections), list(state.outages)
        self.transfer, self.leaderless_since = state.transfer, state.leaderless_since
        self.leaderless = list(state.leaderless)
        self.departing, self.syncs, self.pauses = state.departing, list(state.syncs), list(state.pauses)
        self.formed_at: float | None = None  # quorum formed (bootstrap or restore) at this instant of the call
        self.events: list[QuorumEvent] = []

    def _candidates(self, *, exclude: str | None = None, quorum: bool = True) -> list[MemberRecord]:
        if quorum and not self.quorum_up:
            return []
        found = [m for m in self.members.values() if m.alive and not m.terminating and m.pod != exclude]
        # reference §2: etcd hands over to the longest-connected voter; elections use the same order, which also
        # keeps a just-restarted member from winning. Ties (a cluster started at once) go to the lowest ordinal.
        return sorted(found, key=lambda m: (m.anchor, m.ordinal, m.pod))

    def _pick(self, candidates: list[str], at: float) -> str:
        """The next term's leader: the model's first candidate, unless ``draws`` names another one."""
        pick = self.draws.winner(len(self.elections), candidates, at) if self.draws is not None else None
        return pick if pick in candidates else candidates[0]

    def serving(self) -> bool:
        """A linearizable read succeeds: quorum holds and a leader answers (not mid-election or mid-hand-over)."""
        return self.quorum_up and self.leader is not None

    def _set_leader(self, pod: str | None, t: float) -> None:
        if pod is None and self.leader is not None:
            self.leaderless_since = t
        elif pod is not None and self.leaderless_since is not None:
            self.leaderless.append((self.leaderless_since, t))
            self.leaderless_since = None
        self.leader = pod
        self.events.append(QuorumEvent(t=t, type=LEADER_CHANGED, pod=pod))

    def _settle(self, t: float) -> None:
        """Keep the invariants after any change at ``t``: a leaderless quorum with a candidate has an election
        pending; every alive member's latest (pending or written) lease content is its current role."""
        if not self.quorum_up:
            self.transfer = None
        if not self.quorum_up or self.leader is not None or self.transfer is not None or self.departing is not None:
            self.election_at = None  # a leader that stopped at SIGTERM is waited for: its followers elect at its exit
        elif self.election_at is None and self._candidates():
            planned = t + (self.p.join_seconds if self.formed_at == t else self.p.election_seconds)
            drawn = self.draws.election_at(t, planned) if self.draws is not None else None
            self.election_at = planned if drawn is None else max(t, drawn)
        for m in sorted(self.members.values(), key=lambda m: (m.ordinal, m.pod)):
            if not m.alive:
                continue
            role = leases.LEADER if m.pod == self.leader else leases.MEMBER
            holder = leases.format_holder(m.member_id, self.cluster_id, role)
            queued = [w.holder for w in self.pending if w.lease == m.pod]
            if holder != (queued[-1] if queued else self.leases.get(m.pod)):
                self.pending.append(LeaseWrite(due=t + self.p.lease_lag_seconds, lease=m.pod, holder=holder))

    def _ticks(self) -> dict[str, float]:
        """The next tick of each member whose next tick can change something."""
        return {m.pod: tick_at(m.anchor, m.next_tick, self.p) for m in self.members.values()
                if m.alive and tick_matters(ready=m.ready, failures=m.failures, participating=self.serving())}

    def due_times(self) -> list[float]:
        due = list(self._ticks().values()) + [w.due for w in self.pending] + [at for _, at in self.syncs]
        if self.leader is not None and not self.quorum_up and self.lost_since is not None:
            due.append(self.lost_since + self.p.leader_holds_quorum_loss_seconds)  # a held leader steps down
        if self.transfer is not None:
            due.append(self.transfer[1])
        return due if self.election_at is None else [self.election_at, *due]

    def advance(self, until: float, *, inclusive: bool) -> None:
        """Fire elections, probe ticks and lease writes due before ``until`` (or at it), in time order."""
        while True:
            due = self.due_times()
            t = min(due, default=None)
            if t is None or t > until or (t == until and not inclusive):
                break
            if self.election_at == t:  # an election first: ticks do not depend on the leader
                self.election_at = None
                chosen = [m.pod for m in self._candidates()]
                if self.leader is None and chosen:
                    self._set_leader(self._pick(chosen, t), t)
                    self.elections.append(t)
                self._settle(t)
                continue
            if self.transfer is not None and self.transfer[1] == t:
                target = self.members.get(self.transfer[0])
                self.transfer = None
                if self.leader is None and target is not None and target.alive and not target.terminating:
                    self._set_leader(target.pod, t)
                    self.elections.append(t)  # a hand-over starts a new term (etcd's MoveLeader)
                self._settle(t)  # cancelled: an election follows as after any loss
                continue
            if self.leader is not None and not self.quorum_up and self.lost_since is not None \
                    and t == self.lost_since + self.p.leader_holds_quorum_loss_seconds:
                self._set_leader(None, t)  # held through the loss as long as it may: it steps down now
                self._settle(t)
                continue
            if any(at == t for _, at in self.syncs):
                if self.serving():  # a member joining a leaderless quorum is synced by the election's winner
                    self.pauses.append((t, t + self.p.rejoin_sync_seconds))
                self.syncs = [s for s in self.syncs if s[1] != t]
                continue
            ticking = [pod for pod, at in self._ticks().items() if at == t]
            for pod in ticking:
                m = self.members[pod]
                ready, failures = probe_tick(ready=m.ready, failures=m.failures, participating=self.serving(),
                                             params=self.p)
                self.members[pod] = replace(m, ready=ready, failures=failures, next_tick=m.next_tick + 1)
            if ticking:
                continue
            for w in [w for w in self.pending if w.due == t]:
                self.leases[w.lease] = w.holder
            self.pending = [w for w in self.pending if w.due != t]
        # Skipped ticks (ones that could change nothing) are passed over, so the next one is after ``until``.
        for pod, m in self.members.items():
            if m.alive:
                k = max(m.next_tick, first_tick_index(m.anchor, until, self.p, after=inclusive))
                if k != m.next_tick:
                    self.members[pod] = replace(m, next_tick=k)

    def observe(self, observations: Sequence[MemberObservation], now: float, replicas: int) -> None:
        """Apply the members as seen at ``now``: stops, starts, quorum changes, leader loss and hand-over."""
        old, members, stopped = self.members, {}, set()
        for o in observations:
            if o.pod in members:
                raise ValueError(f"member {o.pod!r} observed twice")
            prev = old.get(o.pod)
            mid = o.member_id or leases.member_id(o.pod)
            same = (prev is not None and prev.alive and o.alive and prev.uid == o.uid
                    and prev.started_at == o.started_at)
            if same and prev is not None:
                rec = replace(prev, ordinal=o.ordinal, member_id=mid, terminating=o.terminating,
                              transfer_to=o.transfer_to)
            elif o.alive:
                anchor = now if o.started_at is None else o.started_at
                rec = MemberRecord(pod=o.pod, ordinal=o.ordinal, uid=o.uid, member_id=mid, alive=True,
                                   terminating=o.terminating, started_at=o.started_at, anchor=anchor,
                                   next_tick=first_tick_index(anchor, now, self.p), transfer_to=o.transfer_to)
            else:
                rec = MemberRecord(pod=o.pod, ordinal=o.ordinal, uid=o.uid, member_id=mid, alive=False,
                                   terminating=o.terminating, started_at=o.started_at)
            if prev is not None and prev.alive and not same:
                stopped.add(o.pod)
            if o.alive and not same and self.p.rejoin_sync_seconds > 0 and self.quorum_up:
                # a member (re)joining a running quorum: the leader syncs it once it has booted (join_seconds)
                self.syncs.append((o.pod, rec.anchor + self.p.join_seconds))
            members[o.pod] = rec
        stopped |= {pod for pod, m in old.items() if m.alive and pod not in members}
        self.members = members
        # reference §1.4: backup-restore writes only while etcd answers; a stopped member's pending write is lost.
        self.pending = [w for w in self.pending if w.lease not in stopped]
        self.syncs = sorted((s for s in self.syncs if s[0] not in stopped), key=lambda s: s[1])
        if self.departing is not None and (self.departing in stopped or self.departing not in members):
            self.departing = None  # it exited: its followers' election timer starts now (``_settle``)

        # A terminating member has left raft already: etcd stops at SIGTERM even though its process (and the pod)
        # lingers until it exits, as measured with real etcd 3.5 (README, "Real etcd in the loop").
        voting = sum(1 for m in members.values() if m.alive and not m.terminating)
        needed = replicas // 2 + 1 if self.p.majority_writes else 1  # Patroni: any member can hold the leader key
        up = replicas > 0 and voting >= needed
        was_up = self.quorum_up
        if self.quorum_up and not up and replicas > 0:
            self.lost_since = now
            self.events.append(QuorumEvent(t=now, type=QUORUM_LOST))
        elif self.lost_since is not None and (up or replicas == 0):
            self.outages.append((self.lost_since, now))
            if up:
                self.events.append(QuorumEvent(t=now, type=QUORUM_RESTORED))
            self.lost_since = None
        if up and not was_up:
            self.formed_at = now
        self.quorum_up = up

        leader = members.get(self.leader) if self.leader is not None else None
        if (leader is not None and leader.alive and leader.terminating and not old[leader.pod].terminating
                and self.p.shutdown_transfer and was_up and replicas > 0):
            # reference §2: SIGTERM makes the leader move leadership to a voting follower before it exits; its own
            # vote counts, so only the majority with it is needed.
            followers = self._candidates(exclude=leader.pod, quorum=False)
            if followers and voting + 1 >= needed:
                if not self.p.shutdown_transfer_needs_quorum or voting >= needed:
                    self._set_leader(self._pick([m.pod for m in followers], now), now)
                # Either way the successor's term is a new one; short of a quorum it is lost with it (etcd) or
                # never won at all (NATS), and the leader goes with its quorum just below.
                self.elections.append(now)
        if (leader is not None and self.leader == leader.pod and leader.alive and leader.terminating
                and self.p.leader_stops_at_sigterm and not old[leader.pod].terminating):
            # No hand-over happened: it stops serving now, and its followers elect once it has left, or at once
            # where it gives leadership up before its exit (Patroni releases the leader key).
            self.departing = None if self.p.election_at_sigterm else leader.pod
            self._set_leader(None, now)
        if self.leader is not None and (self.leader in stopped or not up) and not self._holds(now):
            self._set_leader(None, now)
        self._requested_transfer(old, now)
        if replicas == 0 and self.leaderless_since is not None:  # a dissolved cluster is not waiting for a leader
            self.leaderless.append((self.leaderless_since, now))
            self.leaderless_since = None
        self._settle(now)

    def _holds(self, now: float) -> bool:
        """The leader keeps leading through a quorum loss (``leader_holds_quorum_loss_seconds``): it is still up and
        not stopping, and the loss began less than that long ago."""
        leader = self.members.get(self.leader) if self.leader is not None else None
        return (leader is not None and leader.alive and not leader.terminating and self.lost_since is not None
                and now < self.lost_since + self.p.leader_holds_quorum_loss_seconds)

    def _requested_transfer(self, old: Mapping[str, MemberRecord], now: float) -> None:
        """Start a hand-over the leader's pod newly asks for, when its target can lead: the leader steps down now."""
        leader = self.members.get(self.leader) if self.leader is not None else None
        if leader is None or leader.transfer_to is None or self.transfer is not None:
            return
        prev = old.get(leader.pod)
        target = self.members.get(leader.transfer_to)
        if (prev is None or prev.transfer_to != leader.transfer_to) and target is not None and target.alive \
                and not target.terminating and target.pod != leader.pod and self.quorum_up:
            self._set_leader(None, now)
            self.transfer = (target.pod, now + self.p.transfer_seconds)

    def freeze(self, now: float) -> QuorumState:
        return QuorumState(at=now, members=tuple(sorted(self.members.values(), key=lambda m: (m.ordinal, m.pod))),
                           quorum_up=self.quorum_up, lost_since=self.lost_since, leader=self.leader,
                           election_at=self.election_at, leases=tuple(sorted(self.leases.items())),
                           pending=tuple(self.pending), elections=tuple(self.elections),
                           outages=tuple(self.outages), transfer=self.transfer,
                           leaderless_since=self.leaderless_since, leaderless=tuple(self.leaderless),
                           departing=self.departing, syncs=tuple(self.syncs), pauses=tuple(self.pauses))


def step(observations: Sequence[MemberObservation], state: QuorumState, params: QuorumParams, *, replicas: int,
         now: float, cluster_id: str | None = None, draws: Draws | None = None) -> QuorumStep:
    """Bring the model to ``now``: fire what fell due, apply the observations, fire what is due at ``now``.

    ``draws`` replaces what the model would choose where a real cluster draws at random (``rollwise lab`` replays a
    real run's draws through it): the pick of a new term's leader (an election's winner, a shutdown hand-over's
    target), given how many terms the model has begun and the candidates in the model's order, where an answer
    that is not a candidate keeps the model's pick; and the instant of an election the model has scheduled, where an
    answer before its cause is taken as the cause.

    Calling again at the same ``now`` with the same observations changes nothing. ``now`` before the previous
    call's time, or a negative ``replicas``, is a ValueError.
    """
    if state.at is not None and now < state.at:
        raise ValueError(f"time went backwards: {now} < {state.at}")
    if replicas < 0:
        raise ValueError(f"replicas must be >= 0, got {replicas}")
    work = _Work(state, params, cluster_id, draws)
    work.advance(now, inclusive=False)
    work.observe(observations, now, replicas)
    work.advance(now, inclusive=True)
    new = work.freeze(now)
    before = dict(state.leases)
    return QuorumStep(
        state=new,
        ready={m.pod: m.ready for m in new.members},
        leader=new.leader,
        leases={name: holder for name, holder in new.leases if before.get(name) != holder},
        events=tuple(work.events),
        wake_at=min(work.due_times(), default=None),
    )
