"""``rollwise.dev/leader-transfer``: before deleting the leader, the controller asks it to hand leadership to an
updated follower through the pod annotation hook, waits for the Leases to show the new leader, and gives up after
the set's timeout (deleting the leader as without the hook, and saying so)."""

from __future__ import annotations

from quorum_views import NEW, NOW, deleted, leases_for, member, quorum_set, view_of

from rollwise.api.leader_transfer import REQUESTED_AT_ANNOTATION, TRANSFER_TO_ANNOTATION
from rollwise.controllers.plan import AnnotatePod, EmitEvent, WriteStatus
from rollwise.controllers.quorum import reconcile_quorum
from rollwise.controllers.quorum.settings import LEADER_TRANSFER, LEADER_TRANSFER_TIMEOUT, read_settings

ON = {LEADER_TRANSFER: "true"}


def _leader_last(notes: dict[str, str], *, asked: tuple[str, float] | None = None) -> list[dict]:
    """Five members, 1-4 updated, etcd-0 (outdated) leads; ``asked`` puts a transfer request on etcd-0."""
    pods = [member(0), *(member(o, rev=NEW) for o in range(1, 5))]
    if asked is not None:
        pods[0]["metadata"]["annotations"] = {TRANSFER_TO_ANNOTATION: asked[0], REQUESTED_AT_ANNOTATION: str(asked[1])}
    return pods


def test_the_leader_is_asked_to_hand_over_to_the_longest_updated_follower_instead_of_being_deleted() -> None:
    plan = reconcile_quorum(view_of(quorum_set(5, notes=ON), _leader_last(ON), leases_for(5, 0)))
    assert deleted(plan) == []
    (ask,) = plan.of_type(AnnotatePod)
    assert ask.name == "etcd-0" and ask.uid == "uid-etcd-0-etcd-old"
    assert dict(ask.annotations) == {TRANSFER_TO_ANNOTATION: "etcd-4", REQUESTED_AT_ANNOTATION: f"{NOW:.3f}"}
    assert [e.event_reason for e in plan.of_type(EmitEvent)] == ["LeaderTransferRequested"]
    assert str(plan.blocked[0]).startswith("waiting for etcd-0 to hand leadership to etcd-4 before it is deleted")
    assert plan.requeue_after is not None and plan.requeue_after <= 10.0


def test_while_the_hand_over_is_pending_nothing_is_deleted_or_asked_again_and_the_wake_up_is_the_deadline() -> None:
    notes = {**ON, LEADER_TRANSFER_TIMEOUT: "5"}
    plan = reconcile_quorum(view_of(quorum_set(5, notes=notes), _leader_last(notes, asked=("etcd-4", NOW - 2)),
                                    leases_for(5, 0)))
    assert deleted(plan) == [] and plan.of_type(AnnotatePod) == []
    assert plan.requeue_after is not None and abs(plan.requeue_after - 3.0) < 0.01


def test_once_the_leases_name_the_new_leader_the_old_one_is_deleted_as_a_follower() -> None:
    plan = reconcile_quorum(view_of(quorum_set(5, notes=ON), _leader_last(ON, asked=("etcd-4", NOW - 1)),
                                    leases_for(5, 4)))
    assert deleted(plan) == ["etcd-0"]
    assert "participating follower" in plan.of_type(EmitEvent)[0].message


def test_a_hand_over_that_does_not_happen_in_time_deletes_the_leader_and_says_so() -> None:
    notes = {**ON, LEADER_TRANSFER_TIMEOUT: "5"}
    plan = reconcile_quorum(view_of(quorum_set(5, notes=notes), _leader_last(notes, asked=("etcd-4", NOW - 5)),
                                    leases_for(5, 0)))
    assert deleted(plan) == ["etcd-0"]
    warning = next(e for e in plan.of_type(EmitEvent) if e.event_reason == "LeaderTransferTimedOut")
    assert warning.event_type == "Warning" and "5s after it was asked to hand leadership to etcd-4" in warning.message
    conditions = plan.of_type(WriteStatus)[0].status["conditions"]
    assert "deleted without a hand-over" in next(c for c in conditions if c["type"] == "AllMembersUpdated")["message"]


def test_a_request_naming_a_member_that_cannot_lead_is_made_again_for_one_that_can() -> None:
    pods = _leader_last(ON, asked=("etcd-9", NOW - 100))
    plan = reconcile_quorum(view_of(quorum_set(5, notes=ON), pods, leases_for(5, 0)))
    assert deleted(plan) == []
    assert dict(plan.of_type(AnnotatePod)[0].annotations)[TRANSFER_TO_ANNOTATION] == "etcd-4"


def test_without_the_annotation_the_leader_is_deleted_last_as_before() -> None:
    plan = reconcile_quorum(view_of(quorum_set(5), _leader_last({}), leases_for(5, 0)))
    assert deleted(plan) == ["etcd-0"] and plan.of_type(AnnotatePod) == []


def test_followers_still_go_first_and_are_never_asked_anything() -> None:
    pods = [member(o) for o in range(5)]
    plan = reconcile_quorum(view_of(quorum_set(5, notes=ON), pods, leases_for(5, 0)))
    assert deleted(plan) == ["etcd-4"] and plan.of_type(AnnotatePod) == []


def test_a_paused_set_asks_for_no_hand_over() -> None:
    sts = quorum_set(5, notes=ON)
    sts["spec"]["paused"] = True
    plan = reconcile_quorum(view_of(sts, _leader_last(ON), leases_for(5, 0)))
    assert plan.of_type(AnnotatePod) == [] and deleted(plan) == []


def test_invalid_transfer_annotations_are_reported_with_their_field_path() -> None:
    _, errors = read_settings(quorum_set(3, notes={LEADER_TRANSFER: "yes", LEADER_TRANSFER_TIMEOUT: "0"}))
    assert [e.path for e in errors] == [f"metadata.annotations[{LEADER_TRANSFER}]",
                                        f"metadata.annotations[{LEADER_TRANSFER_TIMEOUT}]"]
    assert 'must be "true", "false" or "patroni"' in str(errors[0])


def test_a_leader_that_stepped_down_is_not_deleted_until_a_lease_names_the_new_leader() -> None:
    pods = _leader_last(ON, asked=("etcd-4", NOW - 1))
    plan = reconcile_quorum(view_of(quorum_set(5, notes=ON), pods, leases_for(5, None)))
    assert deleted(plan) == []
    assert "no member Lease names a leader yet" in str(plan.blocked[0])
    late = reconcile_quorum(view_of(quorum_set(5, notes=ON), pods, leases_for(5, None), now=NOW + 30))
    assert deleted(late) == ["etcd-0"]  # bounded by the same deadline
