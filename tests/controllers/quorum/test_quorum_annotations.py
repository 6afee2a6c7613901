"""Beyond DEP-07: quorum-safe batches of followers, roles from a pod label, and invalid annotations reported."""

from __future__ import annotations

import pytest
from quorum_views import NEW, World, deleted, leases_for, member, quorum_set, view_of

from rollwise.api.identity import revision_of
from rollwise.controllers.plan import DeletePod, EmitEvent, WriteStatus
from rollwise.controllers.quorum import (
    INVALID_ANNOTATION_EVENT,
    LEADER_VALUE,
    LEASE_TEMPLATE,
    MAX_UNAVAILABLE_MEMBERS,
    MEMBER_CONTAINER,
    ROLE_LABEL,
    reconcile_quorum,
)

# -- max-unavailable-members -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "leader", "setting", "expected"),
    [
        (5, 0, None, ["etcd-4"]),
        (5, 0, "1", ["etcd-4"]),
        (5, 0, "auto", ["etcd-4", "etcd-3"]),
        (5, 0, "2", ["etcd-4", "etcd-3"]),
        (5, 0, "3", ["etcd-4", "etcd-3"]),
        (7, 0, "auto", ["etcd-6", "etcd-5", "etcd-4"]),
        (7, 0, "2", ["etcd-6", "etcd-5"]),
        (3, 0, "auto", ["etcd-2"]),
        (2, 0, "auto", ["etcd-1"]),
        (5, 4, "auto", ["etcd-3", "etcd-2"]),
        (5, 3, "10", ["etcd-4", "etcd-2"]),
    ],
    ids=["5-no-annotation-one", "5-one", "5-auto-headroom-2", "5-two", "5-three-capped-by-quorum", "7-auto-three",
         "7-two", "3-auto-one", "2-auto-no-headroom-means-one", "5-auto-skips-leader", "5-large-capped-skips-leader"],
)
def test_step4_deletes_a_quorum_safe_batch_of_followers(
    replicas: int, leader: int, setting: str | None, expected: list[str]
) -> None:
    notes = {} if setting is None else {MAX_UNAVAILABLE_MEMBERS: setting}
    plan = reconcile_quorum(view_of(quorum_set(replicas, notes=notes), [member(o) for o in range(replicas)],
                                    leases_for(replicas, leader)))
    assert deleted(plan) == expected
    assert [d.unless_leader for d in plan.of_type(DeletePod)] == expected
    assert [e.event_reason for e in plan.of_type(EmitEvent)] == ["QuorumAwareDelete"] * len(expected)


def test_batch_size_counts_only_participating_members_against_quorum() -> None:
    # 7 members: one outdated member has no container status (Unknown: skipped by step 2, not participating).
    pods = [member(0, "unknown")] + [member(o) for o in range(1, 7)]
    plan = reconcile_quorum(view_of(quorum_set(7, notes={MAX_UNAVAILABLE_MEMBERS: "auto"}), pods, leases_for(7, 1)))
    assert deleted(plan) == ["etcd-6", "etcd-5"], "6 participating, quorum 4: headroom 2"


@pytest.mark.parametrize(
    ("revisions", "leader", "expected"),
    [
        ([NEW, "etcd-old", NEW, NEW, NEW], 1, ["etcd-1"]),
        ([NEW, NEW, NEW, "etcd-old", "etcd-old"], 3, ["etcd-4"]),
    ],
    ids=["only-the-leader-left-goes-alone", "one-follower-and-the-leader-left-follower-only"],
)
def test_the_leader_is_never_part_of_a_batch(revisions: list[str], leader: int, expected: list[str]) -> None:
    sts = quorum_set(5, notes={MAX_UNAVAILABLE_MEMBERS: "auto"})
    plan = reconcile_quorum(view_of(sts, [member(o, rev=r) for o, r in enumerate(revisions)], leases_for(5, leader)))
    assert deleted(plan) == expected


def test_batched_rollout_of_five_takes_three_rounds_and_the_leader_last() -> None:
    world = World(quorum_set(5, notes={MAX_UNAVAILABLE_MEMBERS: "auto"}), [member(o) for o in range(5)],
                  leases_for(5, leader=2))
    rounds = []
    for _ in range(40):
        plan = world.reconcile()
        if deleted(plan):
            rounds.append(deleted(plan))
        if not plan.requeue_after and not world.phase:
            break
        world.advance(plan)
    assert rounds == [["etcd-4", "etcd-3"], ["etcd-1", "etcd-0"], ["etcd-2"]]
    assert {revision_of(p) for p in world.pods.values()} == {NEW}


def test_partial_batch_one_rejoins_one_stalls_holds_at_step3_and_step2_still_replaces_broken_members() -> None:
    world = World(quorum_set(5, notes={MAX_UNAVAILABLE_MEMBERS: "2"}), [member(o) for o in range(5)],
                  leases_for(5, leader=0), stall={"etcd-3"})
    first = world.reconcile()
    assert deleted(first) == ["etcd-4", "etcd-3"]
    world.advance(first)  # both terminating
    assert deleted(world.reconcile()) == []
    world.advance(world.plans[-1])  # both gone
    gone = world.reconcile().blocked
    assert [b.pod for b in gone] == ["etcd-3", "etcd-4"] and gone[0].cause.startswith("not yet recreated")
    world.advance(world.plans[-1])  # etcd-4 starting, etcd-3 crash-looping
    world.advance(world.reconcile())  # etcd-4 ready; etcd-3 stays broken
    held = world.reconcile()
    assert deleted(held) == []
    assert [b.pod for b in held.blocked] == ["etcd-3"]
    assert "updated but not participating (container etcd is CrashLoopBackOff)" in held.blocked[0].cause
    # Meanwhile an outdated member breaks: step 2 replaces it despite the stalled one (it contributes nothing).
    world.pods["etcd-1"] = member(1, "CrashLoopBackOff")
    assert deleted(world.reconcile()) == ["etcd-1"]


# -- roles from a pod label --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("notes", "role_labels", "expected"),
    [
        ({ROLE_LABEL: "etcd.gardener.cloud/role"}, ["follower", "follower", "leader"], "etcd-1"),
        ({ROLE_LABEL: "etcd.gardener.cloud/role"}, ["leader", "follower", None], "etcd-2"),
        ({ROLE_LABEL: "role", LEADER_VALUE: "primary"}, ["replica", "replica", "primary"], "etcd-1"),
        ({ROLE_LABEL: "role", LEADER_VALUE: "primary"}, ["replica", "replica", "leader"], "etcd-2"),
    ],
    ids=["default-leader-value", "missing-label-is-follower", "custom-leader-value", "default-value-not-used"],
)
def test_role_label_names_the_leader(notes: dict[str, str], role_labels: list[str | None], expected: str) -> None:
    key = notes[ROLE_LABEL]
    pods = [member(o, labels={} if v is None else {key: v}) for o, v in enumerate(role_labels)]
    leases = leases_for(3, leader=1)  # Leases disagree; with a role label they are not read
    plan = reconcile_quorum(view_of(quorum_set(notes=notes), pods, leases))
    assert deleted(plan) == [expected]
    assert plan.of_type(DeletePod)[0].unless_leader is None, "no Lease to re-check when roles come from labels"


def test_role_label_rollout_updates_the_labelled_leader_last() -> None:
    key = "etcd.gardener.cloud/role"
    pods = [member(o, labels={key: "leader" if o == 0 else "follower"}) for o in range(3)]
    world = World(quorum_set(notes={ROLE_LABEL: key}), pods)
    assert world.run() == ["etcd-2", "etcd-1", "etcd-0"]


# -- invalid annotations -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("notes", "path"),
    [
        ({MAX_UNAVAILABLE_MEMBERS: "0"}, MAX_UNAVAILABLE_MEMBERS),
        ({MAX_UNAVAILABLE_MEMBERS: "-1"}, MAX_UNAVAILABLE_MEMBERS),
        ({MAX_UNAVAILABLE_MEMBERS: "two"}, MAX_UNAVAILABLE_MEMBERS),
        ({MAX_UNAVAILABLE_MEMBERS: "1.5"}, MAX_UNAVAILABLE_MEMBERS),
        ({MAX_UNAVAILABLE_MEMBERS: "Auto"}, MAX_UNAVAILABLE_MEMBERS),
        ({MAX_UNAVAILABLE_MEMBERS: ""}, MAX_UNAVAILABLE_MEMBERS),
        ({ROLE_LABEL: "not a key!"}, ROLE_LABEL),
        ({ROLE_LABEL: ""}, ROLE_LABEL),
        ({ROLE_LABEL: "role", LEADER_VALUE: ""}, LEADER_VALUE),
        ({ROLE_LABEL: "role", LEADER_VALUE: "bad value!"}, LEADER_VALUE),
        ({LEADER_VALUE: "primary"}, LEADER_VALUE),
        ({MEMBER_CONTAINER: "sidecar"}, MEMBER_CONTAINER),
        ({LEASE_TEMPLATE: "member-lease"}, LEASE_TEMPLATE),
        ({LEASE_TEMPLATE: "{pod}_Member"}, LEASE_TEMPLATE),
    ],
    ids=["max-zero", "max-negative", "max-word", "max-fraction", "max-auto-wrong-case", "max-empty",
         "role-label-bad-key", "role-label-empty", "leader-value-empty", "leader-value-bad", "leader-value-alone",
         "member-container-unknown", "lease-template-without-pod", "lease-template-not-a-dns-name"],
)
def test_invalid_annotation_is_reported_once_and_nothing_is_deleted(notes: dict[str, str], path: str) -> None:
    pods = [member(0, "CrashLoopBackOff"), member(1), member(2)]
    plan = reconcile_quorum(view_of(quorum_set(notes=notes), pods, leases_for(3, 0)))
    assert deleted(plan) == []
    warnings = plan.of_type(EmitEvent)
    assert [(e.event_type, e.event_reason) for e in warnings] == [("Warning", INVALID_ANNOTATION_EVENT)]
    assert f"metadata.annotations[{path}]" in warnings[0].message
    assert plan.blocked and all("invalid annotation" in b.cause for b in plan.blocked)
    status = plan.of_type(WriteStatus)[0].status
    again = reconcile_quorum(view_of({**quorum_set(notes=notes), "status": status}, pods, leases_for(3, 0)))
    assert again.actions == () and again.blocked == plan.blocked


def test_invalid_annotation_does_not_matter_while_nothing_is_outdated() -> None:
    plan = reconcile_quorum(view_of(quorum_set(notes={MAX_UNAVAILABLE_MEMBERS: "zero"}),
                                    [member(o, rev=NEW) for o in range(3)]))
    assert not plan.of_type(EmitEvent) and plan.blocked == ()
    assert plan.of_type(WriteStatus)[0].status["conditions"][0]["status"] == "True"
