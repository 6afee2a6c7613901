"""The quorum model in scripted timelines: bootstrap, quorum loss, elections, hand-over, readiness lag, leases."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rollwise.kubelet.quorum import (
    MemberObservation,
    QuorumParams,
    QuorumState,
    QuorumStep,
    figures,
    leaderless_seconds,
    step,
)

CLUSTER = "c1"


def mid(i: int) -> str:
    return f"m{i:x}"


def pod(i: int) -> str:
    return f"etcd-{i}"


class Sim:
    """A stand-in for the simulation loop: keeps the observations, calls ``step`` at every wake-up and at every
    change, and checks on every call that calling again at once changes nothing (idempotence)."""

    def __init__(self, replicas: int = 3, params: QuorumParams | None = None, *, follow: bool = True) -> None:
        self.replicas, self.params, self.follow = replicas, params or QuorumParams(), follow
        self.obs: dict[str, MemberObservation] = {}
        self.gen: dict[int, int] = {}
        self.state = QuorumState.initial()
        self.wake: float | None = None
        self.events: list[tuple[float, str, str | None]] = []
        self.writes: list[tuple[float, str, str]] = []
        self.ready_log: list[tuple[float, str, bool]] = []
        self.ready: dict[str, bool] = {}
        self.last: QuorumStep | None = None

    def call(self, now: float) -> QuorumStep:
        obs = sorted(self.obs.values(), key=lambda o: o.ordinal)
        out = step(obs, self.state, self.params, replicas=self.replicas, now=now, cluster_id=CLUSTER)
        again = step(obs, out.state, self.params, replicas=self.replicas, now=now, cluster_id=CLUSTER)
        assert (again.state, again.events, dict(again.leases), again.wake_at) == (out.state, (), {}, out.wake_at)
        assert dict(again.ready) == dict(out.ready)
        self.state, self.wake, self.last = out.state, out.wake_at, out
        self.events += [(e.t, e.type, e.pod) for e in out.events]
        self.writes += [(now, lease, holder) for lease, holder in sorted(out.leases.items())]
        for name, ready in out.ready.items():
            if self.ready.get(name, False) != ready:
                self.ready_log.append((now, name, ready))
        self.ready = dict(out.ready)
        return out

    def go(self, t: float) -> Sim:
        """Follow wake-ups before ``t`` (when following), then call at ``t``."""
        while self.follow and self.wake is not None and self.wake < t:
            self.call(self.wake)
        self.call(t)
        return self

    def _change(self, t: float, i: int, **kw: object) -> Sim:
        while self.follow and self.wake is not None and self.wake < t:
            self.call(self.wake)
        self.obs[pod(i)] = replace(self.obs[pod(i)], **kw)  # type: ignore[arg-type]
        self.call(t)
        return self

    def up(self, t: float, *ordinals: int, started: float | None = None) -> Sim:
        """Containers start (a pod that was removed comes back as a new object, new uid)."""
        while self.follow and self.wake is not None and self.wake < t:
            self.call(self.wake)
        for i in ordinals:
            if pod(i) not in self.obs:
                self.gen[i] = self.gen.get(i, 0) + 1
                self.obs[pod(i)] = MemberObservation(pod=pod(i), ordinal=i, alive=False, uid=f"u{i}-{self.gen[i]}",
                                                     member_id=mid(i))
            self.obs[pod(i)] = replace(self.obs[pod(i)], alive=True, started_at=t if started is None else started)
        self.call(t)
        return self

    def crash(self, t: float, i: int) -> Sim:
        return self._change(t, i, alive=False, started_at=None)

    def restart(self, t: float, i: int) -> Sim:
        """A kill that restarts the container at once: alive before and after, new startedAt."""
        return self._change(t, i, started_at=t)

    def delete(self, t: float, i: int) -> Sim:
        return self._change(t, i, terminating=True)

    def remove(self, t: float, i: int) -> Sim:
        while self.follow and self.wake is not None and self.wake < t:
            self.call(self.wake)
        del self.obs[pod(i)]
        self.call(t)
        return self

    def leader_changes(self) -> list[tuple[float, str | None]]:
        return [(t, p) for t, kind, p in self.events if kind == "LeaderChanged"]

    def ready_at(self, name: str) -> float | None:
        return next((t for t, p, r in self.ready_log if p == name and r), None)

    def unready_at(self, name: str) -> float | None:
        return next((t for t, p, r in self.ready_log if p == name and not r), None)


def booted(replicas: int = 3, params: QuorumParams | None = None) -> Sim:
    return Sim(replicas, params).up(0.0, *range(replicas)).go(20.0)


# --- bootstrap ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "starts", "leader_at", "ready_at"),
    [
        (3, [0, 0, 0], 1.0, [15, 15, 15]),
        (5, [0, 0, 0, 0, 0], 1.0, [15, 15, 15, 15, 15]),
        (3, [0, 2, 4], 3.0, [15, 17, 19]),  # quorum (2) at t=2, election 1 s later
        (5, [0, 2, 4, 6, 8], 5.0, [15, 17, 19, 21, 23]),  # quorum (3) at t=4
        (1, [3], 4.0, [18]),
    ],
    ids=["3-together", "5-together", "3-staggered", "5-staggered", "single"],
)
def test_bootstrap_elects_lowest_ordinal_once_quorum_forms_and_ready_follows_the_probe_delay(
    replicas: int, starts: list[int], leader_at: float, ready_at: list[int]
) -> None:
    sim = Sim(replicas)
    for i, t in enumerate(starts):
        sim.up(float(t), i)
    sim.go(60.0)
    assert sim.leader_changes() == [(leader_at, "etcd-0")]
    assert [sim.ready_at(pod(i)) for i in range(replicas)] == ready_at
    assert [e for e in sim.events if e[1] != "LeaderChanged"] == []  # bootstrap is not a quorum loss
    assert figures(sim.state, 60.0) == (0.0, 1)
    assert sim.wake is None  # a steady cluster needs no wake-ups


@pytest.mark.parametrize(
    ("replicas", "alive", "ready"),
    [(1, 1, True), (3, 1, False), (3, 2, True), (4, 2, False), (4, 3, True), (5, 2, False), (5, 3, True)],
    ids=["1-of-1", "1-of-3", "2-of-3", "2-of-4", "3-of-4", "2-of-5", "3-of-5"],
)
def test_members_participate_only_while_a_quorum_of_replicas_is_alive(replicas: int, alive: int, ready: bool) -> None:
    sim = Sim(replicas).up(0.0, *range(alive)).go(100.0)
    assert set(sim.ready.values()) == {ready}
    assert sim.last is not None
    assert (sim.last.leader == "etcd-0") is ready
    assert figures(sim.state, 100.0) == (0.0, 1 if ready else 0)


# --- quorum loss ----------------------------------------------------------------------------------------------------


def test_losing_two_of_three_loses_quorum_and_leader_and_a_restart_restores_both() -> None:
    sim = booted().crash(30.0, 2)
    assert sim.events[-1:] == [(1.0, "LeaderChanged", "etcd-0")]  # one member down: nothing happens
    sim.crash(35.0, 1).restart(40.0, 0).up(50.0, 1).go(60.0)
    assert sim.events[1:] == [
        (35.0, "QuorumLost", None),
        (35.0, "LeaderChanged", None),
        (50.0, "QuorumRestored", None),
        (51.0, "LeaderChanged", "etcd-0"),
    ]
    assert figures(sim.state, 60.0) == (15.0, 2)
    assert figures(sim.state, 60.0, since=20.0) == (15.0, 1)
    assert figures(sim.state, 60.0, since=40.0) == (10.0, 1)


def test_an_open_outage_counts_until_now() -> None:
    sim = booted().crash(30.0, 1).crash(32.0, 2).go(50.0)
    assert figures(sim.state, 50.0) == (18.0, 1)
    assert figures(sim.state, 80.0, since=40.0) == (40.0, 0)


def test_scaling_to_zero_dissolves_the_cluster_without_counting_a_loss() -> None:
    sim = booted()
    sim.replicas = 0
    sim.go(30.0)
    assert sim.events[1:] == [(30.0, "LeaderChanged", None)]
    assert figures(sim.state, 90.0) == (0.0, 1)


# --- elections ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("election", [1.0, 2.5, 0.0], ids=["default", "slow", "instant"])
def test_leader_crash_elects_a_new_leader_after_election_seconds_and_counts_it(election: float) -> None:
    sim = booted(params=QuorumParams(election_seconds=election)).crash(30.0, 0).go(40.0)
    assert sim.leader_changes() == [(election, "etcd-0"), (30.0, None), (30.0 + election, "etcd-1")]
    assert figures(sim.state, 40.0) == (0.0, 2)
    assert figures(sim.state, 40.0, since=30.0) == (0.0, 1)


def test_leader_container_restart_is_a_stop_even_though_it_is_running_again_at_once() -> None:
    sim = booted().restart(30.0, 0).go(60.0)
    assert sim.leader_changes()[1:] == [(30.0, None), (31.0, "etcd-1")]
    assert sim.unready_at("etcd-0") == 30.0
    assert sim.ready_at("etcd-0") == 15.0  # the first stretch; the second starts at the next probe
    assert sim.ready_log[-1] == (45.0, "etcd-0", True)


def test_follower_crash_changes_no_leader() -> None:
    sim = booted().crash(30.0, 2).up(35.0, 2).go(60.0)
    assert sim.leader_changes() == [(1.0, "etcd-0")]
    assert figures(sim.state, 60.0) == (0.0, 1)


def test_quorum_loss_during_an_election_cancels_it() -> None:
    sim = booted().crash(30.0, 0).crash(30.5, 1).go(40.0)
    assert sim.leader_changes()[1:] == [(30.0, None)]
    assert sim.last is not None
    assert sim.last.leader is None
    assert figures(sim.state, 40.0) == (9.5, 1)


# --- graceful deletion ----------------------------------------------------------------------------------------------


def test_graceful_leader_deletion_hands_over_at_once_in_a_new_term() -> None:
    sim = booted().delete(30.0, 0)
    assert sim.leader_changes()[1:] == [(30.0, "etcd-1")]
    sim.remove(33.0, 0).up(40.0, 0).go(80.0)
    assert sim.leader_changes()[1:] == [(30.0, "etcd-1")]  # no gap when the old leader goes
    assert figures(sim.state, 80.0) == (0.0, 2)  # the successor's term counts, as raft's term does
    assert leaderless_seconds(sim.state, 80.0) == 0.0
    assert sim.ready_log[-1] == (55.0, "etcd-0", True)


def test_hand_over_skips_followers_that_are_terminating_themselves() -> None:
    sim = booted(5).delete(30.0, 1).delete(31.0, 0)
    assert sim.leader_changes()[1:] == [(31.0, "etcd-2")]


def test_a_lone_leader_stops_leading_when_its_deletion_is_requested() -> None:
    sim = booted(1).delete(30.0, 0)
    assert sim.leader_changes() == [(1.0, "etcd-0"), (30.0, None)]
    sim.remove(33.0, 0).up(40.0, 0).go(60.0)
    assert sim.events[1:] == [
        (30.0, "QuorumLost", None),
        (30.0, "LeaderChanged", None),
        (40.0, "QuorumRestored", None),
        (41.0, "LeaderChanged", "etcd-0"),
    ]
    assert figures(sim.state, 60.0) == (10.0, 2)


def test_graceful_follower_deletion_changes_no_leader() -> None:
    sim = booted().delete(30.0, 2).remove(33.0, 2).up(40.0, 2).go(60.0)
    assert sim.leader_changes() == [(1.0, "etcd-0")]


# --- readiness ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("container_start", "first_seen", "ready_at"),
    [(40.0, 40.0, 55.0), (40.0, 43.0, 55.0), (41.5, 41.5, 56.5)],
    ids=["seen-at-start", "seen-late-anchored-on-startedAt", "off-grid-start"],
)
def test_a_rejoining_member_participates_at_once_but_is_ready_only_at_its_first_probe_tick(
    container_start: float, first_seen: float, ready_at: float
) -> None:
    sim = booted().crash(30.0, 2).up(first_seen, 2, started=container_start).go(80.0)
    assert sim.unready_at("etcd-2") == 30.0
    assert sim.ready_log[-1] == (ready_at, "etcd-2", True)


@pytest.mark.parametrize(
    ("threshold", "period", "unready_at"),
    [(5, 5.0, 55.0), (3, 5.0, 45.0), (1, 5.0, 35.0), (2, 10.0, 45.0)],
    ids=["druid-default", "three", "one", "slow-period"],
)
def test_ready_drops_after_failure_threshold_consecutive_ticks_without_quorum(
    threshold: int, period: float, unready_at: float
) -> None:
    # Ticks at 15 + k*period; quorum is lost at 32, so the first failing tick is the first one after 32.
    params = QuorumParams(probe_failure_threshold=threshold, probe_period_seconds=period)
    sim = booted(params=params).crash(32.0, 1).crash(32.0, 2).go(200.0)
    assert sim.unready_at("etcd-1") == sim.unready_at("etcd-2") == 32.0  # stopped: at once
    assert sim.unready_at("etcd-0") == unready_at
    assert sim.wake is None


def test_a_success_between_failures_resets_the_count() -> None:
    # Failing ticks at 35 and 40, success at 45 (restored at 43), then 5 more failures from 50 (lost at 46).
    sim = booted().crash(32.0, 1).crash(32.0, 2).up(43.0, 1).crash(46.0, 1).go(100.0)
    assert sim.unready_at("etcd-0") == 70.0


def test_a_short_outage_is_not_seen_by_readiness() -> None:
    sim = booted().crash(32.0, 1).crash(32.0, 2).up(48.0, 1).go(100.0)
    assert sim.unready_at("etcd-0") is None
    assert figures(sim.state, 100.0) == (16.0, 2)


def test_a_terminating_member_leaves_the_quorum_when_its_deletion_is_requested() -> None:
    """Real etcd leaves raft at SIGTERM, long before its pod is gone: the quorum is lost at the request."""
    sim = booted().crash(30.0, 2).delete(31.0, 1)
    assert sim.events[-2:] == [(31.0, "QuorumLost", None), (31.0, "LeaderChanged", None)]
    sim.remove(33.0, 1)
    assert sim.events[-1][0] == 31.0  # its removal changes nothing more


# --- leases ---------------------------------------------------------------------------------------------------------


def test_leases_carry_the_role_and_are_written_lease_lag_after_it_changes() -> None:
    sim = booted(params=QuorumParams(lease_lag_seconds=2.0)).delete(30.0, 0).go(40.0)
    assert sim.writes == [
        (2.0, "etcd-0", "m0:c1:Member"),
        (2.0, "etcd-1", "m1:c1:Member"),
        (2.0, "etcd-2", "m2:c1:Member"),
        (3.0, "etcd-0", "m0:c1:Leader"),
        (32.0, "etcd-0", "m0:c1:Member"),
        (32.0, "etcd-1", "m1:c1:Leader"),
    ]


def test_a_member_gone_before_its_lease_write_keeps_the_stale_role() -> None:
    sim = booted(params=QuorumParams(lease_lag_seconds=2.0)).delete(30.0, 0).remove(31.0, 0).go(40.0)
    assert dict(sim.state.leases)["etcd-0"] == "m0:c1:Leader"
    assert dict(sim.state.leases)["etcd-1"] == "m1:c1:Leader"  # two Leader leases: the DEP's known limitation


def test_without_lag_leases_change_at_the_instant_of_the_role_change() -> None:
    sim = booted().crash(30.0, 0).go(40.0)
    assert sim.writes[3:] == [(1.0, "etcd-0", "m0:c1:Leader"), (31.0, "etcd-1", "m1:c1:Leader")]
    assert dict(sim.state.leases)["etcd-0"] == "m0:c1:Leader"  # a dead member stops renewing


def test_a_leader_that_loses_quorum_is_written_as_member() -> None:
    sim = booted().crash(30.0, 1).crash(30.0, 2)
    assert sim.writes[-1] == (30.0, "etcd-0", "m0:c1:Member")


# --- time -----------------------------------------------------------------------------------------------------------


def _script(sim: Sim) -> Sim:
    return (sim.up(0.0, 0, 1, 2).crash(30.0, 0).delete(50.0, 1).remove(53.0, 1).crash(54.0, 2)
            .up(90.0, 1).up(95.0, 2).go(200.0))


def test_a_late_call_ends_in_the_same_state_as_following_every_wake_up() -> None:
    followed, jumped = _script(Sim()), _script(Sim(follow=False))
    assert jumped.state == followed.state

    def order(e: tuple[float, str, str | None]) -> tuple[float, str, str]:
        return e[0], e[1], e[2] or ""

    assert sorted(jumped.events, key=order) == sorted(followed.events, key=order)
    # bootstrap, the election after the crash, the hand-over at 50 (quorum then lost), the election at 95
    assert figures(jumped.state, 200.0) == figures(followed.state, 200.0) == (45.0, 4)


def test_a_late_call_reports_what_fell_due_at_the_time_it_happened() -> None:
    sim = Sim(follow=False).up(0.0, 0, 1, 2).go(100.0)
    assert sim.events == [(1.0, "LeaderChanged", "etcd-0")]
    assert sim.ready_log[-3:] == [(100.0, "etcd-0", True), (100.0, "etcd-1", True), (100.0, "etcd-2", True)]
    assert sim.writes[-1] == (100.0, "etcd-0", "m0:c1:Leader")
    assert figures(sim.state, 100.0) == (0.0, 1)


def test_a_late_call_fires_what_fell_due_under_the_members_as_they_were_before_the_change() -> None:
    sim = Sim(follow=False).up(0.0, 0, 1, 2).crash(100.0, 1)
    sim.crash(100.0, 2)
    assert sim.events == [(1.0, "LeaderChanged", "etcd-0"), (100.0, "QuorumLost", None),
                          (100.0, "LeaderChanged", None)]
    assert sim.ready["etcd-0"] is True  # Ready since its tick at 15; the failures start now


def test_wake_ups_are_asked_for_exactly_when_something_can_change() -> None:
    sim = Sim(3, QuorumParams(lease_lag_seconds=2.0))
    wakes = [sim.up(0.0, 0, 1, 2).wake]
    while sim.wake is not None:
        sim.call(sim.wake)
        wakes.append(sim.wake)
    assert wakes == [1.0, 2.0, 3.0, 15.0, None]  # election, Member leases, Leader lease, first probe tick


def test_calling_at_an_earlier_time_is_refused() -> None:
    sim = booted()
    with pytest.raises(ValueError, match="backwards"):
        step([], sim.state, sim.params, replicas=3, now=10.0)


def test_a_member_observed_twice_is_refused() -> None:
    o = MemberObservation(pod="etcd-0", ordinal=0, alive=True, started_at=0.0)
    with pytest.raises(ValueError, match="twice"):
        step([o, o], QuorumState.initial(), QuorumParams(), replicas=3, now=0.0)


# --- properties -----------------------------------------------------------------------------------------------------

OPS = ("up", "crash", "restart", "delete", "remove")


def _apply(sim: Sim, t: float, op: str, i: int) -> None:
    """One scripted change, skipped (the same way for every Sim) when it makes no sense for the pod."""
    o = sim.obs.get(pod(i))
    if op == "up" and (o is None or not o.alive):
        sim.up(t, i)
    elif op == "crash" and o is not None and o.alive:
        sim.crash(t, i)
    elif op == "restart" and o is not None and o.alive:
        sim.restart(t, i)
    elif op == "delete" and o is not None and not o.terminating:
        sim.delete(t, i)
    elif op == "remove" and o is not None:
        sim.remove(t, i)
    else:
        sim.go(t)


def _check_invariants(sim: Sim) -> None:
    out = sim.last
    assert out is not None
    alive = {o.pod for o in sim.obs.values() if o.alive}
    assert {p for p, r in out.ready.items() if r} <= alive  # Ready needs a running container
    if out.leader is not None:
        assert out.leader in alive
        assert len(alive) >= sim.replicas // 2 + 1
    assert out.wake_at is None or out.wake_at > sim.state.at  # type: ignore[operator]


@pytest.mark.parametrize("replicas", [1, 3, 5], ids=["one", "three", "five"])
def test_random_scripts_keep_invariants_and_late_calls_agree_with_following_every_wake_up(replicas: int) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    ops = st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.0, 20.0]), st.sampled_from(OPS),
                             st.integers(0, replicas - 1)), max_size=25)
    params = st.builds(QuorumParams, election_seconds=st.sampled_from([0.0, 1.0, 2.0]),
                       lease_lag_seconds=st.sampled_from([0.0, 2.0]),
                       probe_period_seconds=st.sampled_from([1.0, 5.0]),
                       probe_failure_threshold=st.integers(1, 5))

    @settings(max_examples=60, deadline=None)
    @given(script=ops, p=params)
    def run(script: list[tuple[float, str, int]], p: QuorumParams) -> None:
        followed, jumped = Sim(replicas, p), Sim(replicas, p, follow=False)
        t = 0.0
        for dt, op, i in script:
            t += dt
            _apply(followed, t, op, i)
            _check_invariants(followed)
            _apply(jumped, t, op, i)
        followed.go(t + 100.0)
        jumped.go(t + 100.0)
        assert jumped.state == followed.state
        assert sorted(jumped.events, key=repr) == sorted(followed.events, key=repr)
        assert figures(jumped.state, t + 100.0) == figures(followed.state, t + 100.0)

    run()


def test_a_leader_whose_departure_loses_quorum_still_hands_over_then_the_successor_is_lost() -> None:
    # real etcd (rollwise lab etcd, dep07): the leaving leader votes for its successor, which leads in a new term
    # and then cannot commit; a term and a leader move, then no leader.
    sim = booted().crash(30.0, 2).go(40.0)
    sim.delete(40.0, 0)
    assert sim.leader_changes()[1:] == [(40.0, "etcd-1"), (40.0, None)]
    assert figures(sim.state, 40.0) == (0.0, 2)
    assert [e[1] for e in sim.events if e[0] == 40.0] == ["QuorumLost", "LeaderChanged", "LeaderChanged"]


def test_no_hand_over_when_the_leader_and_its_followers_are_no_majority() -> None:
    sim = booted(5).crash(30.0, 3).crash(30.0, 4).crash(30.0, 2).go(40.0)
    assert sim.state.leader is None
    sim = booted(5).crash(30.0, 3).crash(30.0, 4).go(40.0)
    sim.delete(41.0, 0)  # etcd-0 leads with 1 and 2; with its vote 3 of 5 elect etcd-1
    assert sim.leader_changes()[-2:] == [(41.0, "etcd-1"), (41.0, None)]


def test_the_election_after_quorum_forms_takes_the_join_time_and_after_a_leader_loss_the_election_time() -> None:
    params = QuorumParams(election_seconds=1.0, join_election_seconds=0.25, probe_initial_delay_seconds=0.0,
                          probe_period_seconds=0.5, probe_failure_threshold=1)
    sim = Sim(3, params).up(0.0, 0, 1, 2).go(5.0)
    assert sim.leader_changes() == [(0.25, "etcd-0")]
    sim.crash(10.0, 0).go(20.0)
    assert sim.leader_changes()[1:] == [(10.0, None), (11.0, "etcd-1")]


def test_readiness_needs_a_leader_as_a_linearizable_read_does() -> None:
    params = QuorumParams(election_seconds=1.0, probe_initial_delay_seconds=0.0, probe_period_seconds=0.5,
                         probe_failure_threshold=1)
    sim = Sim(3, params).up(0.0, 0, 1, 2).go(5.0)
    assert sim.ready_at("etcd-1") == 1.0  # the first tick with a leader, not the first with quorum
    sim.crash(10.0, 0).go(20.0)
    assert (10.0, "etcd-1", False) in sim.ready_log  # unready while the followers elect
    assert (11.0, "etcd-1", True) in sim.ready_log
