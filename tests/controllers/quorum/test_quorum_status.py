"""What the controller reports: the AllMembersUpdated condition, delete and waiting events, no spam on a long hold."""

from __future__ import annotations

from typing import Any

import pytest
from quorum_views import NEW, NOW, leases_for, member, quorum_set, view_of

from rollwise.api.conditions import condition_of
from rollwise.controllers.plan import DeletePod, EmitEvent, Plan, WriteStatus
from rollwise.controllers.quorum import (
    ALL_MEMBERS_UPDATED,
    DELETE_EVENT,
    REQUEUE_SECONDS,
    WAITING_EVENT,
    reconcile_quorum,
)


def _written(plan: Plan) -> dict[str, Any]:
    writes = plan.of_type(WriteStatus)
    assert len(writes) == 1, plan.actions
    return writes[0].status  # type: ignore[no-any-return]


def _condition(status: dict[str, Any]) -> dict[str, Any]:
    found = condition_of(status["conditions"], ALL_MEMBERS_UPDATED)
    assert found is not None
    return found


def _with_status(sts: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {**sts, "status": status}


def test_done_writes_all_members_updated_true_and_keeps_the_rest_of_the_status() -> None:
    sts = quorum_set()
    plan = reconcile_quorum(view_of(sts, [member(o, rev=NEW) for o in range(3)]))
    status = _written(plan)
    assert _condition(status) == {"type": ALL_MEMBERS_UPDATED, "status": "True", "reason": ALL_MEMBERS_UPDATED,
                                  "message": f"every member is at revision {NEW}", "lastTransitionTime": NOW}
    progressing = condition_of(status["conditions"], "Progressing")
    assert progressing == sts["status"]["conditions"][0], "another controller's condition must be kept as it was"
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        k: v for k, v in sts["status"].items() if k != "conditions"}
    assert not plan.of_type(EmitEvent)


def test_a_settled_set_plans_nothing_at_all() -> None:
    pods = [member(o, rev=NEW) for o in range(3)]
    first = reconcile_quorum(view_of(quorum_set(), pods))
    again = reconcile_quorum(view_of(_with_status(quorum_set(), _written(first)), pods, now=NOW + 50))
    assert again == Plan()


def test_a_deletion_sets_the_condition_false_with_what_it_does() -> None:
    plan = reconcile_quorum(view_of(quorum_set(), [member(0), member(1), member(2)], leases_for(3, 0)))
    cond = _condition(_written(plan))
    assert (cond["status"], cond["reason"]) == ("False", "UpdateInProgress")
    assert cond["message"] == "step 4: etcd-2 is a participating follower (lease etcd-2 says Member)"
    reasons = [a.event_reason for a in plan.of_type(EmitEvent)]
    assert reasons == [DELETE_EVENT], "a deletion is not also a wait"
    kinds = [type(a).__name__ for a in plan.actions]
    assert kinds == ["EmitEvent", "DeletePod", "WriteStatus"], "explain, act, then record"


def test_a_hold_emits_one_waiting_event_and_then_stays_quiet_while_it_lasts() -> None:
    pods = [member(0), member(1), member(2, "unready", rev=NEW)]
    first = reconcile_quorum(view_of(quorum_set(), pods))
    waiting = first.of_type(EmitEvent)
    assert [e.event_reason for e in waiting] == [WAITING_EVENT]
    assert waiting[0].message == "waiting for etcd-2: updated but not participating " \
                                 "(container etcd is running but not ready)"
    status = _written(first)
    assert _condition(status)["message"] == waiting[0].message
    for later in (NOW + 10, NOW + 20, NOW + 300):
        again = reconcile_quorum(view_of(_with_status(quorum_set(), status), pods, now=later))
        assert again.actions == (), "a lasting hold must not re-emit or rewrite"
        assert [b.pod for b in again.blocked] == ["etcd-2"] and again.requeue_after == REQUEUE_SECONDS


def test_a_different_wait_emits_a_new_waiting_event_and_keeps_the_transition_time() -> None:
    pods = [member(0), member(1), member(2, "unready", rev=NEW)]
    status = _written(reconcile_quorum(view_of(quorum_set(), pods)))
    pods[2] = member(2, "CrashLoopBackOff", rev=NEW)
    plan = reconcile_quorum(view_of(_with_status(quorum_set(), status), pods, now=NOW + 30))
    assert [e.message for e in plan.of_type(EmitEvent)] == [
        "waiting for etcd-2: updated but not participating (container etcd is CrashLoopBackOff)"]
    assert _condition(_written(plan))["lastTransitionTime"] == NOW, "status stayed False: no transition"


def test_the_top_gate_wait_names_every_pod_in_flight() -> None:
    pods = [member(0, terminating=True), member(1, terminating=True, rev=NEW)]
    plan = reconcile_quorum(view_of(quorum_set(), pods))
    assert plan.of_type(EmitEvent)[0].message == (
        "waiting for etcd-0: terminating; waiting for etcd-1: terminating; "
        "waiting for etcd-2: not yet recreated (2 of 3 members exist)")


@pytest.mark.parametrize("repeat", [1, 3])
def test_a_repeated_deletion_is_announced_each_time_it_is_attempted(repeat: int) -> None:
    pods = [member(0, "CrashLoopBackOff"), member(1), member(2)]
    sts = quorum_set()
    events = []
    for i in range(repeat):
        plan = reconcile_quorum(view_of(sts, pods, now=NOW + i))
        events += [e.event_reason for e in plan.of_type(EmitEvent)]
        assert [d.name for d in plan.of_type(DeletePod)] == ["etcd-0"]
        if plan.of_type(WriteStatus):
            sts = _with_status(sts, _written(plan))
    assert events == [DELETE_EVENT] * repeat
