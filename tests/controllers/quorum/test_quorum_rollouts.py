"""Whole rollouts played out reconcile by reconcile: order, restarts, template changes, strategy switches."""

from __future__ import annotations

import pytest
from quorum_views import MID, NEW, OLD, World, deleted, leases_for, member, quorum_set, view_of

from rollwise.api.identity import revision_of
from rollwise.controllers.plan import DeletePod, Plan
from rollwise.controllers.quorum import reconcile_quorum


@pytest.mark.parametrize(
    ("replicas", "leader", "order"),
    [
        (3, 0, ["etcd-2", "etcd-1", "etcd-0"]),
        (3, 1, ["etcd-2", "etcd-0", "etcd-1"]),
        (3, 2, ["etcd-1", "etcd-0", "etcd-2"]),
        (5, 0, ["etcd-4", "etcd-3", "etcd-2", "etcd-1", "etcd-0"]),
        (5, 3, ["etcd-4", "etcd-2", "etcd-1", "etcd-0", "etcd-3"]),
        (1, 0, ["etcd-0"]),
    ],
    ids=["3-leader-0", "3-leader-1", "3-leader-2", "5-leader-0", "5-leader-3", "single-member"],
)
def test_healthy_rollout_updates_followers_highest_first_and_the_leader_last(
    replicas: int, leader: int, order: list[str]
) -> None:
    world = World(quorum_set(replicas), [member(o) for o in range(replicas)], leases_for(replicas, leader))
    assert world.run() == order
    assert {revision_of(p) for p in world.pods.values()} == {NEW}


def test_dep07_motivating_case_replaces_the_crashed_member_first_and_never_loses_quorum() -> None:
    # seed 001 "Motivation": P-0 unhealthy, P-1 and P-2 form the quorum; the naive order would delete P-2 first.
    world = World(quorum_set(), [member(0, "CrashLoopBackOff"), member(1), member(2)], leases_for(3, leader=1))
    dips = []
    for _ in range(40):
        plan = world.reconcile()
        if not plan.requeue_after and not world.phase:
            break
        if any(d.reason.startswith("step 4") for d in plan.of_type(DeletePod)):
            dips.append(world.participating() - len(deleted(plan)))
        world.advance(plan)
    assert world.order == ["etcd-0", "etcd-2", "etcd-1"]
    assert min(dips) >= 2, "a participating member was removed while quorum (2 of 3) had no headroom"


def test_no_participating_member_is_deleted_while_an_updated_member_has_not_rejoined() -> None:
    world = World(quorum_set(5), [member(o) for o in range(5)], leases_for(5, leader=0))
    for _ in range(60):
        view = world.view()
        plan = world.reconcile()
        lagging = [p for p in view.pods if revision_of(p) == NEW and not p["status"]["containerStatuses"][0]["ready"]]
        if lagging:
            assert deleted(plan) == []
        if not plan.requeue_after and not world.phase:
            break
        world.advance(plan)
    assert len(world.order) == 5


def test_template_change_mid_rollout_treats_the_intermediate_revision_as_outdated() -> None:
    # etcd-2 was updated to MID, then the template changed again to NEW; etcd-0 was already recreated at NEW.
    sts = quorum_set()
    pods = [member(0, rev=NEW), member(1, rev=OLD), member(2, rev=MID)]
    world = World(sts, pods, leases_for(3, leader=1))
    assert world.run() == ["etcd-2", "etcd-1"], "etcd-0 is at the update revision and is never re-deleted"
    assert {revision_of(p) for p in world.pods.values()} == {NEW}


def test_template_change_while_a_deletion_is_in_flight_waits_then_continues_at_the_new_revision() -> None:
    world = World(quorum_set(), [member(o) for o in range(3)], leases_for(3, leader=0))
    world.advance(world.reconcile())  # etcd-2 terminating, at MID by the time it returns
    world.sts["status"]["updateRevision"] = MID
    world.advance(world.reconcile())
    world.advance(world.reconcile())  # etcd-2 recreated at MID
    world.sts["status"]["updateRevision"] = NEW
    assert world.run() == ["etcd-2", "etcd-2", "etcd-1", "etcd-0"]


def test_restart_mid_rollout_decides_the_same_from_the_same_view() -> None:
    pods = [member(0), member(1, rev=NEW), member(2, rev=NEW)]
    leases = leases_for(3, leader=1)
    first = reconcile_quorum(view_of(quorum_set(), pods, leases))
    second = reconcile_quorum(view_of(quorum_set(), pods, leases))  # a fresh controller: nothing remembered
    assert first == second and deleted(first) == ["etcd-0"]


def test_switch_from_rolling_update_continues_without_re_deleting_pods_the_statefulset_controller_updated() -> None:
    # RollingUpdate updated etcd-2 (highest ordinal first) and stalled on etcd-1; the switch hands over.
    pods = [member(0), member(1, "unready"), member(2, rev=NEW)]
    leases = leases_for(3, leader=0)
    assert reconcile_quorum(view_of(quorum_set(strategy="RollingUpdate"), pods, leases)) == Plan()
    world = World(quorum_set(), pods, leases)
    assert world.run() == ["etcd-1", "etcd-0"]


def test_switch_with_nothing_outdated_only_reports_completion() -> None:
    plan = reconcile_quorum(view_of(quorum_set(), [member(o, rev=NEW) for o in range(3)]))
    assert deleted(plan) == [] and plan.requeue_after is None


def test_quorum_loss_recovers_by_recreating_members_one_at_a_time() -> None:
    # Quorum lost: every member unready, no Lease tells anything useful. Step 2 works through them.
    world = World(quorum_set(), [member(o, "unready") for o in range(3)])
    first = world.reconcile()
    assert deleted(first) == ["etcd-2"]
    world.advance(first)
    assert deleted(world.reconcile()) == [], "top gate: etcd-2 is terminating"
