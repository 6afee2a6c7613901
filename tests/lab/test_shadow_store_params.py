"""The quorum model's per-store switches (``QuorumParams``), each pinned by a replay fed a recorded timeline as
``rollwise lab zookeeper|patroni`` records one (``rollwise.lab.shadow``), and read from a scenario's options."""

from __future__ import annotations

from dataclasses import replace

from rollwise.kubelet.quorum import MemberObservation, QuorumParams, parse_quorum_params
from rollwise.lab.experiment import run_model, shadow_of_run
from rollwise.lab.figures import StatusSample
from rollwise.lab.scenarios import SCENARIOS, STRATEGIES
from rollwise.lab.shadow import ShadowFigures, Snapshot, group_samples, replay
from rollwise.lab.stores import LAB_STORES

IDS = {1: "m-0", 2: "m-1", 3: "m-2"}
ALL = frozenset(IDS.values())


def member(i: int, *, alive: bool = True, started: float | None = -10.0, terminating: bool = False,
           gen: int = 1) -> MemberObservation:
    return MemberObservation(pod=f"m-{i}", ordinal=i, alive=alive, started_at=started if alive else None,
                             terminating=terminating, uid=f"u{i}-{gen}")


def samples(*terms: tuple[float, int, int]) -> list[StatusSample]:
    return [StatusSample(t=t, member="x", leader=leader, term=term) for t, leader, term in terms]


def run(snaps: list[Snapshot], real: list[StatusSample], params: QuorumParams) -> ShadowFigures:
    return replay(snaps, real, IDS, params, replicas=3, since=-0.5, until=8.0)


def replica_deleted_while_another_is_down() -> list[Snapshot]:
    """m-0 crash-looping, m-1 the primary; the replica m-2 deleted at 0, gone at 0.5, running again at 2.5."""
    return [
        (-10.0, (member(0, alive=False), member(1), member(2)), frozenset({"m-1", "m-2"})),
        (0.0, (member(0, alive=False), member(1), member(2, terminating=True)), frozenset({"m-1"})),
        (0.5, (member(0, alive=False), member(1), member(2, alive=False, gen=2)), frozenset({"m-1"})),
        (2.5, (member(0, alive=False), member(1), member(2, started=2.5, gen=2)), frozenset({"m-1"})),
    ]


def test_without_majority_writes_a_primary_with_its_replicas_down_keeps_writing() -> None:
    real = samples((-1.0, 2, 7))
    snaps = replica_deleted_while_another_is_down()
    raft = run(snaps, real, QuorumParams(election_seconds=2.4, shutdown_transfer=False))
    assert raft.outage_seconds > 2.0  # a majority down: the quorum rule stops writes until m-2 is back
    patroni = run(snaps, real, QuorumParams(election_seconds=2.4, shutdown_transfer=False, majority_writes=False))
    assert (patroni.outage_seconds, patroni.elections, patroni.leader_moves) == (0.0, 0, 0)


def leader_deleted() -> list[Snapshot]:
    """Three healthy members, m-2 leading; m-2 deleted at 0, its process exits at 0.4, running again at 2.4."""
    up = (member(0), member(1), member(2))
    return [
        (-10.0, up, ALL),
        (0.0, (member(0), member(1), member(2, terminating=True)), ALL),
        (0.4, (member(0), member(1), member(2, alive=False, gen=2)), frozenset({"m-0", "m-1"})),
        (2.4, (member(0), member(1), member(2, started=2.4, gen=2)), frozenset({"m-0", "m-1"})),
    ]


def test_a_leader_that_stops_at_sigterm_is_without_writes_from_its_deletion_and_elected_after_its_exit() -> None:
    real = samples((-1.0, 3, 4), (1.0, 1, 5))
    zk = QuorumParams(election_seconds=0.6, shutdown_transfer=False)
    at_exit = run(leader_deleted(), real, zk)
    assert (at_exit.outage_seconds, at_exit.elections, at_exit.leader_moves) == (0.6, 1, 1)
    at_sigterm = run(leader_deleted(), real, QuorumParams(election_seconds=0.6, shutdown_transfer=False,
                                                         leader_stops_at_sigterm=True))
    # no leader from the deletion (0) to the election 0.6 s after the exit (0.4): the same one term and move
    assert (at_sigterm.outage_seconds, at_sigterm.elections, at_sigterm.leader_moves) == (1.0, 1, 1)


def test_a_primary_that_gives_leadership_up_at_sigterm_is_succeeded_from_its_deletion_not_its_exit() -> None:
    """Patroni: the deleted primary stops PostgreSQL and releases the leader key at once; a replica takes it 2.4 s
    after the deletion, whenever Patroni itself exits (here 0.4 s; in the lab, 1.6-4.9 s)."""
    real = samples((-1.0, 3, 4), (2.4, 1, 5))
    patroni = QuorumParams(election_seconds=2.4, shutdown_transfer=False, majority_writes=False,
                           leader_stops_at_sigterm=True, election_at_sigterm=True)
    fig = run(leader_deleted(), real, patroni)
    assert (fig.outage_seconds, fig.elections, fig.leader_moves) == (2.4, 1, 1)
    at_exit = run(leader_deleted(), real, replace(patroni, election_at_sigterm=False))
    assert at_exit.outage_seconds == 2.8  # from the deletion (0) to 2.4 s after the exit (0.4)
    assert parse_quorum_params({"electionAtSigterm": True}, path="p") == (QuorumParams(election_at_sigterm=True), [])


def test_a_leader_that_hands_over_at_sigterm_is_not_held_by_stopping_at_sigterm() -> None:
    real = samples((-1.0, 3, 4), (0.05, 1, 5))
    fig = run(leader_deleted(), real, QuorumParams(leader_stops_at_sigterm=True))  # etcd's hand-over comes first
    assert (fig.outage_seconds, fig.elections, fig.leader_moves) == (0.0, 1, 1)


def follower_restarted() -> list[Snapshot]:
    """Three healthy members, m-2 leading; the follower m-0 deleted at 0, gone at 0.4, running again at 2.4."""
    up = (member(0), member(1), member(2))
    return [
        (-10.0, up, ALL),
        (0.0, (member(0, terminating=True), member(1), member(2)), frozenset({"m-1", "m-2"})),
        (0.4, (member(0, alive=False, gen=2), member(1), member(2)), frozenset({"m-1", "m-2"})),
        (2.4, (member(0, started=2.4, gen=2), member(1), member(2)), frozenset({"m-1", "m-2"})),
    ]


def test_the_leader_syncing_a_rejoining_member_commits_nothing_for_the_sync_pause() -> None:
    real = samples((-1.0, 3, 4))
    assert run(follower_restarted(), real, QuorumParams(join_election_seconds=1.1)).outage_seconds == 0.0
    fig = run(follower_restarted(), real, QuorumParams(join_election_seconds=1.1, rejoin_sync_seconds=0.3))
    # synced once it has booted (2.4 + 1.1): no commits for 0.3 s, no new term, the leader stays
    assert (fig.outage_seconds, fig.longest_gap_seconds, fig.elections, fig.leader_moves) == (0.3, 0.3, 0, 0)


def test_a_member_whose_start_restores_quorum_is_synced_within_the_election_not_after_it() -> None:
    # dep07's shape: m-0 down, the leader m-2 deleted (quorum lost), running again at 2.4: the election after
    # quorum forms (join 1.1 s) is the whole outage; the sync pause is not added to it
    snaps: list[Snapshot] = [
        (-10.0, (member(0, alive=False), member(1), member(2)), frozenset({"m-1", "m-2"})),
        (0.0, (member(0, alive=False), member(1), member(2, terminating=True)), frozenset({"m-1"})),
        (0.4, (member(0, alive=False), member(1), member(2, alive=False, gen=2)), frozenset()),
        (2.4, (member(0, alive=False), member(1), member(2, started=2.4, gen=2)), frozenset()),
    ]
    real = samples((-1.0, 3, 4), (3.5, 2, 5))
    params = QuorumParams(election_seconds=0.6, join_election_seconds=1.1, shutdown_transfer=False,
                          rejoin_sync_seconds=0.3)
    # quorum lost at the deletion (a terminating member stops voting) until 3.5 (2.4 + 1.1), not 0.3 s more
    assert run(snaps, real, params).outage_seconds == 3.5


def test_the_store_switches_are_scenario_options_and_a_wrong_type_names_its_field() -> None:
    raw = {"majorityWrites": False, "leaderStopsAtSigterm": True, "rejoinSyncSeconds": 0.3}
    assert parse_quorum_params(raw, path="kubelet.apps.zk") == (
        QuorumParams(majority_writes=False, leader_stops_at_sigterm=True, rejoin_sync_seconds=0.3), [])
    _, errors = parse_quorum_params({"majorityWrites": "no", "rejoinSyncSeconds": -1}, path="kubelet.apps.zk")
    assert [(e.path, e.rule) for e in errors] == [
        ("kubelet.apps.zk.majorityWrites", "must be true or false"),
        ("kubelet.apps.zk.rejoinSyncSeconds", "must be greater than or equal to 0")]


def test_a_writer_attached_to_a_stopping_zookeeper_follower_commits_nothing_until_that_member_exits() -> None:
    """ZooKeeper closes a stopping member's client sessions only at its exit: the writer whose commits went through
    the follower m-0 waits from its deletion (0) to its exit (0.4); one attached to m-1 does not wait at all."""
    real = samples((-1.0, 3, 4))
    params = QuorumParams(shutdown_transfer=False, leader_stops_at_sigterm=True)
    on_m0 = replay(follower_restarted(), real, IDS, params, replicas=3, since=-0.5, until=8.0,
                   writer=[(-0.2, "m-1"), (-0.1, "m-0")])
    assert (on_m0.outage_seconds, on_m0.elections, on_m0.leader_moves) == (0.4, 0, 0)
    on_m1 = replay(follower_restarted(), real, IDS, params, replicas=3, since=-0.5, until=8.0,
                   writer=[(-0.2, "m-0"), (-0.1, "m-1")])
    assert on_m1.outage_seconds == 0.0
    assert run(follower_restarted(), real, params).outage_seconds == 0.0  # no writer given: no stall counted


def test_a_leader_whose_departure_loses_quorum_begins_its_successor_s_term_whether_or_not_the_successor_leads() -> None:
    """DEP-07's naive order: m-0 down, the leader m-2 deleted. etcd's leader votes for its successor on the way out
    (a term and a move, then quorum is lost); NATS' proposes its successor as a raft entry, which the successor
    commits and campaigns on at once, but wins no votes from the rest: a term nobody leads at the deletion, then
    one election once m-2 is back and quorum forms (join 1.1 s)."""
    snaps: list[Snapshot] = [
        (-10.0, (member(0, alive=False), member(1), member(2)), frozenset({"m-1", "m-2"})),
        (0.0, (member(0, alive=False), member(1), member(2, terminating=True)), frozenset({"m-1"})),
        (0.1, (member(0, alive=False), member(1), member(2, alive=False, gen=2)), frozenset()),
        (2.4, (member(0, alive=False), member(1), member(2, started=2.4, gen=2)), frozenset()),
    ]
    etcd = QuorumParams(join_election_seconds=1.1)
    handed = run(snaps, samples((-1.0, 3, 4), (0.0, 2, 5)), etcd)
    assert (handed.elections, handed.leader_moves) == (2, 1)
    nats = QuorumParams(join_election_seconds=1.1, shutdown_transfer_needs_quorum=True)
    fig = run(snaps, samples((-1.0, 3, 4), (0.05, 0, 5), (3.5, 2, 6)), nats)
    assert (fig.outage_seconds, fig.elections, fig.leader_moves) == (3.5, 2, 1)


def test_the_nats_lab_holds_the_meta_leader_through_a_short_quorum_loss_as_it_holds_the_stream_s() -> None:
    """NATS' five-two-down, naive: a follower deleted while another is down loses quorum for 2.5 s; the meta leader
    m-1 stays up and keeps its term, as the stream's leader does: the replay of the run counts no election and no
    move for the probed group (the figures of ``rollwise lab nats``), the outage being the stream's."""
    snaps = replica_deleted_while_another_is_down()
    fig = shadow_of_run(snaps, samples((-1.0, 2, 7), (3.0, 2, 7)), IDS, LAB_STORES["nats"].timings, replicas=3,
                        since=-0.5, until=8.0, writer=[], write_leaders=[(-1.0, "m-1"), (3.0, "m-1")])
    assert (fig.outage_seconds, fig.elections, fig.leader_moves) == (2.5, 0, 0)


def test_an_election_drawn_at_random_happens_when_the_run_s_happened_within_the_store_s_timer_range() -> None:
    """NATS draws its election timer at random (4-9 s): the replay takes each election's instant from the run when
    the run's new leader comes within the window after the model's cause (quorum formed at 2.4), and keeps the
    model's own time (join 1.1 s) otherwise."""
    snaps: list[Snapshot] = [
        (-10.0, (member(0, alive=False), member(1), member(2)), frozenset({"m-1", "m-2"})),
        (0.0, (member(0, alive=False), member(1), member(2, terminating=True)), frozenset({"m-1"})),
        (0.1, (member(0, alive=False), member(1), member(2, alive=False, gen=2)), frozenset()),
        (2.4, (member(0, alive=False), member(1), member(2, started=2.4, gen=2)), frozenset()),
    ]
    real = samples((-1.0, 3, 4), (0.05, 0, 5), (7.9, 2, 6))
    nats = QuorumParams(join_election_seconds=1.1, shutdown_transfer_needs_quorum=True)
    fixed = replay(snaps, real, IDS, nats, replicas=3, since=-0.5, until=12.0)
    assert fixed.outage_seconds == 3.5
    drawn = replay(snaps, real, IDS, nats, replicas=3, since=-0.5, until=12.0, election_window=10.0)
    assert (drawn.outage_seconds, drawn.elections, drawn.leader_moves) == (7.9, 2, 1)
    too_late = replay(snaps, real, IDS, nats, replicas=3, since=-0.5, until=14.0, election_window=5.0)
    assert too_late.outage_seconds == 3.5  # 7.9 is 5.5 s after quorum formed: not a draw of a 5 s timer
    assert parse_quorum_params({"shutdownTransferNeedsQuorum": True}, path="p") == (
        QuorumParams(shutdown_transfer_needs_quorum=True), [])


def test_the_zookeeper_lab_counts_the_writer_s_stall_on_its_stopping_member_and_no_rejoin_pause() -> None:
    zk = LAB_STORES["zookeeper"].timings
    assert (zk.rejoin_sync_seconds, zk.client_stalls_at_sigterm, zk.leader_stops_at_sigterm) == (0.0, True, True)
    params = QuorumParams(join_election_seconds=zk.join_election_seconds, rejoin_sync_seconds=zk.rejoin_sync_seconds,
                          shutdown_transfer=zk.shutdown_transfer, leader_stops_at_sigterm=zk.leader_stops_at_sigterm)
    fig = replay(follower_restarted(), samples((-1.0, 3, 4)), IDS, params, replicas=3, since=-0.5, until=8.0,
                 writer=[(-0.1, "m-0")])
    assert fig.outage_seconds == 0.4  # the writer's 0.4 s on the stopping m-0; its return's sync is too short to count


def test_a_leader_that_holds_its_term_through_a_short_quorum_loss_resumes_without_an_election() -> None:
    """NATS' raft leader steps down only 10 s after losing its quorum: the leader m-1 stays up while m-2 restarts
    with m-0 down, so writes stop from m-2's deletion to its return (2.5) and resume then, in the same term."""
    snaps = replica_deleted_while_another_is_down()
    real = samples((-1.0, 2, 7))
    raft = run(snaps, real, QuorumParams(join_election_seconds=1.1))
    assert (raft.outage_seconds, raft.elections) == (3.6, 1)  # lost with the quorum, elected 1.1 s after it returns
    held = run(snaps, real, QuorumParams(join_election_seconds=1.1, leader_holds_quorum_loss_seconds=10.0))
    assert (held.outage_seconds, held.elections, held.leader_moves) == (2.5, 0, 0)
    short = run(snaps, real, QuorumParams(join_election_seconds=1.1, leader_holds_quorum_loss_seconds=1.0))
    assert (short.outage_seconds, short.elections) == (3.6, 1)  # stepped down at 1.0: an election after the return
    assert parse_quorum_params({"leaderHoldsQuorumLossSeconds": 10}, path="p") == (
        QuorumParams(leader_holds_quorum_loss_seconds=10.0), [])


def test_a_group_that_names_its_leader_but_no_term_counts_a_term_per_new_leader() -> None:
    leaders = [(0.0, "m-1"), (0.1, "m-1"), (0.2, ""), (0.3, "m-1"), (0.4, "m-2"), (0.5, "m-0"), (0.6, "elsewhere")]
    assert [(s.t, s.leader, s.term) for s in group_samples(leaders, IDS)] == [
        (0.0, 2, 1), (0.1, 2, 1), (0.3, 2, 1), (0.4, 3, 2), (0.5, 1, 3)]


def test_the_model_s_own_run_counts_a_quorum_loss_its_leader_holds_through_as_time_without_commits() -> None:
    """NATS' five-two-down, naive: the meta leader holds its term through each quorum loss (no election until it is
    deleted itself), but no write commits meanwhile: the model's own run counts the loss, 2 s of restart plus the
    member's 0.05 s exit."""
    nats = LAB_STORES["nats"]
    fig, _ = run_model(SCENARIOS["five-two-down"], STRATEGIES["legacy"], nats.timings, nats)
    assert (fig.outage_seconds, fig.elections, fig.leader_moves) == (2.05, 1, 1)


def test_a_span_without_commits_no_longer_than_the_threshold_is_no_outage_as_on_the_real_side() -> None:
    """A writer at 20 writes/s cannot tell a 0.2 s pause from the time between two commits, so the real outage counts
    no-commit gaps over 0.2 s only; the replay counts its spans the same way, and keeps each one's length as the
    longest gap."""
    real = samples((-1.0, 3, 4))
    short = run(follower_restarted(), real, QuorumParams(join_election_seconds=1.1, rejoin_sync_seconds=0.15))
    assert (short.outage_seconds, short.longest_gap_seconds) == (0.0, 0.15)
    longer = run(follower_restarted(), real, QuorumParams(join_election_seconds=1.1, rejoin_sync_seconds=0.25))
    assert (longer.outage_seconds, longer.longest_gap_seconds) == (0.25, 0.25)
