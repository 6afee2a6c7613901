"""Canary steps on a quorum-aware set (``rollingUpdate.steps`` beside ``type: OnDelete``, api/steps.py): the step's
count caps how many members the quorum-aware controller brings to the update revision, and DEP-07's order picks
them, so the canary is a follower and never the leader, wherever the leader's ordinal is; past the last step (or
after ``promote --full``) the rest follow, the leader last."""

from __future__ import annotations

from typing import Any

from quorum_views import NEW, OLD, World, leases_for, member, quorum_set, view_of

from rollwise.api.identity import revision_of
from rollwise.controllers.plan import DeletePod, Plan
from rollwise.controllers.quorum import reconcile_quorum


def _canary(replicas: int, steps: list[dict[str, Any]], *, index: int = 0, notes: dict[str, str] | None = None,
            **status: Any) -> dict[str, Any]:
    sts = quorum_set(replicas, notes=notes)
    sts["spec"]["updateStrategy"]["rollingUpdate"] = {"steps": steps}
    sts["status"].update({"currentStepIndex": index, "observedGeneration": 0, **status})
    return sts


def _deleted(plan: Plan) -> list[str]:
    return [a.name for a in plan.of_type(DeletePod)]


ONE_THEN_PAUSE = [{"replicas": 1}, {"pause": {}}]


def test_a_canary_of_one_is_a_follower_even_where_the_leader_has_the_highest_ordinal() -> None:
    world = World(_canary(4, ONE_THEN_PAUSE), [member(o) for o in range(4)], leases_for(4, 3))
    for _ in range(20):  # the step's pause is never promoted here: however long it runs, one member moves
        world.advance(world.reconcile())
    # A rolling update's canary is the highest ordinal, etcd-3: here the leader. The quorum-aware one is not.
    assert world.order == ["etcd-2"]
    assert {name: revision_of(p) for name, p in world.pods.items()} == {
        "etcd-0": OLD, "etcd-1": OLD, "etcd-2": NEW, "etcd-3": OLD}


def test_the_step_holds_the_count_it_reached_and_says_why() -> None:
    pods = [member(0), member(1), member(2, rev=NEW), member(3)]
    for index in (0, 1):  # the replicas step done, or the pause after it: the same count
        plan = reconcile_quorum(view_of(_canary(4, ONE_THEN_PAUSE, index=index), pods, leases_for(4, 3)))
        assert _deleted(plan) == []
        assert "canary step: 1 of 4 members at the update revision" in str(plan.blocked[0])


def test_a_member_not_yet_recreated_counts_toward_the_step() -> None:
    # etcd-2 deleted by the canary and not back yet; etcd-0 crash-looping, which DEP-07's step 2 replaces even
    # while an ordinal is missing: not while the step's one member is on its way.
    pods = [member(0, "CrashLoopBackOff"), member(1), member(3)]
    assert _deleted(reconcile_quorum(view_of(quorum_set(4), pods, leases_for(4, 3)))) == ["etcd-0"]
    plan = reconcile_quorum(view_of(_canary(4, ONE_THEN_PAUSE), pods, leases_for(4, 3)))
    assert _deleted(plan) == []


def test_past_the_last_step_the_rest_follow_followers_first_the_leader_last() -> None:
    pods = [member(0), member(1), member(2, rev=NEW), member(3)]
    assert _deleted(reconcile_quorum(view_of(_canary(4, ONE_THEN_PAUSE, index=2), pods, leases_for(4, 3)))) == [
        "etcd-1"]
    pods = [member(0, rev=NEW), member(1, rev=NEW), member(2, rev=NEW), member(3)]
    assert _deleted(reconcile_quorum(view_of(_canary(4, ONE_THEN_PAUSE, index=2), pods, leases_for(4, 3)))) == [
        "etcd-3"]


def test_promote_full_lifts_the_cap() -> None:
    pods = [member(0), member(1), member(2, rev=NEW), member(3)]
    plan = reconcile_quorum(view_of(_canary(4, ONE_THEN_PAUSE, promoteFull=True), pods, leases_for(4, 3)))
    assert _deleted(plan) == ["etcd-1"]


def test_a_batch_is_cut_to_the_room_the_step_leaves() -> None:
    pods = [member(o) for o in range(5)]
    batch = {"rollwise.dev/max-unavailable-members": "auto"}
    # Five members: two may go at once (quorum three); a step of 40% (two members, rounded up) with one there.
    pods[4] = member(4, rev=NEW)
    plan = reconcile_quorum(view_of(_canary(5, [{"replicas": "40%"}, {"pause": {}}], notes=batch), pods,
                                    leases_for(5, 0)))
    assert _deleted(plan) == ["etcd-3"]
    # Without steps the same set takes two.
    assert len(_deleted(reconcile_quorum(view_of(quorum_set(5, notes=batch), pods, leases_for(5, 0))))) == 2


def test_an_abort_caps_nothing() -> None:
    # An abort makes the stable revision the update revision once the StatefulSet controller's status says so;
    # until then the abort itself lifts the cap (the members go back in DEP-07's order).
    pods = [member(0, rev=NEW), member(1), member(2), member(3)]
    plan = reconcile_quorum(view_of(_canary(4, ONE_THEN_PAUSE, abort=True), pods, leases_for(4, 3)))
    assert _deleted(plan) == ["etcd-2"]
    assert _deleted(reconcile_quorum(view_of(_canary(4, ONE_THEN_PAUSE), pods, leases_for(4, 3)))) == []
