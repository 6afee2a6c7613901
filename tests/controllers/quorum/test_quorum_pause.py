"""``spec.paused`` holds the quorum-aware controller too: no member is deleted while the set is paused."""

from __future__ import annotations

from quorum_views import leases_for, member, quorum_set, view_of

from rollwise.controllers.plan import DeletePod
from rollwise.controllers.quorum import reconcile_quorum


def test_the_quorum_aware_controller_deletes_no_member_while_paused() -> None:
    sts = quorum_set(3)
    pods = [member(o) for o in range(3)]
    assert reconcile_quorum(view_of(sts, pods, leases_for(3, 0))).of_type(DeletePod)
    paused = {**sts, "spec": {**sts["spec"], "paused": True}}
    plan = reconcile_quorum(view_of(paused, pods, leases_for(3, 0)))
    assert not plan.of_type(DeletePod)
    assert "rollout paused: 3 members" in str(plan.blocked[0])
