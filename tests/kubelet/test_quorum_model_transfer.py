"""The quorum model's leader transfer: a request on the leader's pod moves leadership in ``transfer_seconds`` (a new
term, so an election), a store that does not hand over on shutdown costs an election timeout, and leaderless time is
counted from a leader's loss to the next leader."""

from __future__ import annotations

from test_quorum_model import Sim, booted, pod

from rollwise.kubelet.quorum import QuorumParams, figures, leaderless_seconds


def _ask(sim: Sim, t: float, leader: int, target: int) -> Sim:
    return sim._change(t, leader, transfer_to=pod(target))


def test_a_requested_transfer_moves_leadership_after_the_transfer_time_and_counts_as_a_new_term() -> None:
    sim = _ask(booted(5), 30.0, 0, 3).go(40.0)
    assert sim.leader_changes()[1:] == [(30.0, None), (30.1, "etcd-3")]
    assert figures(sim.state, 40.0, since=20.0) == (0.0, 1)
    assert abs(leaderless_seconds(sim.state, 40.0, since=20.0) - 0.1) < 1e-9


def test_the_same_request_seen_again_is_not_acted_on_twice() -> None:
    sim = _ask(booted(5), 30.0, 0, 3).go(40.0)
    sim.delete(41.0, 1).go(50.0)  # another change while etcd-0 still carries the request
    assert sim.leader_changes()[1:] == [(30.0, None), (30.1, "etcd-3")]


def test_a_request_to_a_member_that_cannot_lead_changes_nothing() -> None:
    sim = booted(5).delete(25.0, 3)
    sim = _ask(sim, 30.0, 0, 3).go(40.0)
    assert sim.leader_changes() == [(1.0, "etcd-0")]
    assert leaderless_seconds(sim.state, 40.0) == 0.0


def test_a_target_that_stops_during_the_transfer_cancels_it_and_an_election_follows() -> None:
    params = QuorumParams(transfer_seconds=0.5, election_seconds=1.0)
    sim = _ask(booted(5, params), 30.0, 0, 3).crash(30.2, 3).go(40.0)
    assert sim.leader_changes()[1:] == [(30.0, None), (31.5, "etcd-0")]
    assert abs(leaderless_seconds(sim.state, 40.0, since=20.0) - 1.5) < 1e-9


def test_a_store_that_does_not_hand_over_on_shutdown_is_leaderless_for_an_election_after_the_leader_stops() -> None:
    sim = booted(5, QuorumParams(shutdown_transfer=False)).delete(30.0, 0).remove(31.0, 0).go(40.0)
    assert sim.leader_changes()[1:] == [(31.0, None), (32.0, "etcd-1")]
    assert leaderless_seconds(sim.state, 40.0, since=20.0) == 1.0


def test_etcd_hands_over_on_shutdown_with_no_leaderless_time() -> None:
    sim = booted(5).delete(30.0, 0).remove(31.0, 0).go(40.0)
    assert sim.leader_changes()[1:] == [(30.0, "etcd-1")]
    assert leaderless_seconds(sim.state, 40.0, since=20.0) == 0.0


def test_an_open_leaderless_span_counts_until_now_and_dissolving_the_cluster_ends_it() -> None:
    sim = booted(3).crash(30.0, 1).crash(30.0, 2).go(35.0)
    assert leaderless_seconds(sim.state, 35.0, since=20.0) == 5.0
    sim.replicas = 0
    sim.go(36.0)
    assert leaderless_seconds(sim.state, 90.0, since=20.0) == 6.0
    assert leaderless_seconds(sim.state, 90.0, since=0.0) == 6.0  # bootstrap is not a leader lost
