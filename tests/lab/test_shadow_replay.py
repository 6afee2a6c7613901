"""The quorum model replayed on a real run's pod timeline (``rollwise.lab.shadow``): pure, on recorded inputs."""

from __future__ import annotations

from rollwise.kubelet.quorum import MemberObservation, QuorumParams
from rollwise.lab.figures import StatusSample
from rollwise.lab.shadow import Snapshot, replay

PARAMS = QuorumParams(election_seconds=1.0, join_election_seconds=0.85)
IDS = {0xA0: "etcd-0", 0xA1: "etcd-1", 0xA2: "etcd-2"}


def member(i: int, *, alive: bool = True, started: float | None = -10.0, terminating: bool = False,
           gen: int = 1) -> MemberObservation:
    return MemberObservation(pod=f"etcd-{i}", ordinal=i, alive=alive, started_at=started if alive else None,
                             terminating=terminating, uid=f"u{i}-{gen}")


def dep07(*, ready_at: float = 3.9) -> list[Snapshot]:
    """Member 0 crash-looping; the leader etcd-2 deleted at 0, gone at 1, running again at 3 (Ready at
    ``ready_at``)."""
    healthy = (member(0, alive=False), member(1), member(2))
    return [
        (-10.0, healthy, frozenset({"etcd-1", "etcd-2"})),
        (0.0, (member(0, alive=False), member(1), member(2, terminating=True)), frozenset({"etcd-1"})),
        (1.0, (member(0, alive=False), member(1)), frozenset()),
        (1.0, (member(0, alive=False), member(1), member(2, alive=False, gen=2)), frozenset()),
        (3.0, (member(0, alive=False), member(1), member(2, started=3.0, gen=2)), frozenset()),
        (ready_at, (member(0, alive=False), member(1), member(2, started=3.0, gen=2)),
         frozenset({"etcd-1", "etcd-2"})),
    ]


def samples(*terms: tuple[float, int, int]) -> list[StatusSample]:
    return [StatusSample(t=t, member="x", leader=leader, term=term) for t, leader, term in terms]


def test_a_leader_deleted_while_a_member_is_down_hands_over_then_quorum_waits_for_the_restart() -> None:
    real = samples((-1.0, 0xA2, 3), (0.08, 0xA1, 4), (3.9, 0xA1, 5))
    fig = replay(dep07(), real, IDS, PARAMS, replicas=3, since=-0.5, until=6.0)
    # the hand-over to etcd-1 (a term, a move), quorum lost with etcd-2's departure, an election 0.85 s after
    # etcd-2 runs again: 3.85 s without a leader
    assert (fig.elections, fig.leader_moves, fig.outage_seconds) == (2, 1, 3.85)


def test_a_member_turning_ready_proves_a_leader_so_the_pending_election_happens_then() -> None:
    real = samples((-1.0, 0xA2, 3), (0.08, 0xA1, 4), (3.4, 0xA1, 5))
    fig = replay(dep07(ready_at=3.5), real, IDS, PARAMS, replicas=3, since=-0.5, until=6.0)
    assert fig.outage_seconds == 3.5


def test_the_elections_winners_are_the_real_ones_and_the_leader_at_the_start_is_the_real_one() -> None:
    # real etcd elected the restarted etcd-2 in term 5: a second move the model's own pick would not make
    real = samples((-1.0, 0xA2, 3), (0.08, 0xA1, 4), (3.9, 0xA2, 5))
    assert replay(dep07(), real, IDS, PARAMS, replicas=3, since=-0.5, until=6.0).leader_moves == 2
    # with etcd-1 leading at the start, deleting etcd-2 is a follower's departure: no hand-over, one election
    real = samples((-1.0, 0xA1, 3), (3.9, 0xA1, 4))
    fig = replay(dep07(), real, IDS, PARAMS, replicas=3, since=-0.5, until=6.0)
    assert (fig.elections, fig.leader_moves) == (1, 0)


def test_a_hand_over_goes_where_real_etcd_sent_it_so_a_second_one_follows_when_that_member_goes_next() -> None:
    # three healthy members started together; the rolling order deletes etcd-2 (the leader), then etcd-1. Real etcd
    # handed over to etcd-1 (the model alone would pick etcd-0), so deleting etcd-1 is a second hand-over.
    up = (member(0), member(1), member(2))
    snaps: list[Snapshot] = [
        (-10.0, up, frozenset({"etcd-0", "etcd-1", "etcd-2"})),
        (0.0, (member(0), member(1), member(2, terminating=True)), frozenset({"etcd-0", "etcd-1"})),
        (1.0, (member(0), member(1)), frozenset({"etcd-0", "etcd-1"})),
        (3.0, (member(0), member(1), member(2, started=3.0, gen=2)), frozenset({"etcd-0", "etcd-1", "etcd-2"})),
        (4.0, (member(0), member(1, terminating=True), member(2, started=3.0, gen=2)), frozenset({"etcd-0", "etcd-2"})),
    ]
    real = samples((-1.0, 0xA2, 3), (0.05, 0xA1, 4), (4.05, 0xA0, 5))
    fig = replay(snaps, real, IDS, PARAMS, replicas=3, since=-0.5, until=6.0)
    assert (fig.elections, fig.leader_moves, fig.outage_seconds) == (2, 2, 0.0)
    alone = replay(snaps, samples((-1.0, 0xA2, 3)), IDS, PARAMS, replicas=3, since=-0.5, until=6.0)
    assert (alone.elections, alone.leader_moves) == (1, 1)  # the model's own pick, etcd-0, is not deleted next
