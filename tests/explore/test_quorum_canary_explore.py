"""The explorer with a quorum-aware canary (``rollingUpdate.steps`` beside ``type: OnDelete``): promote and abort are
user actions at any state with a step left, alongside template changes; both controllers run, and every invariant
holds at these bounds (the quorum-aware budget, the leader never deleted while a follower is outdated, liveness: a
canary held at its pause has reached its step once that many members are updated and available)."""

from __future__ import annotations

import pytest
from explore_sets import found, manifest, run

from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView

PAUSE = [{"replicas": 1}, {"pause": {}}]
QUORUM_AWARE = {"rollwise.dev/update-policy": "QuorumAware"}


def _explore(replicas: int) -> tuple[bool, dict[str, str], list[int]]:
    promoted: list[int] = []

    def decide(view: SetView) -> Plan:  # the StatefulSet controller, watched; the quorum-aware one runs as it is
        status = view.set.get("status") or {}
        if status.get("currentRevision") != status.get("updateRevision") and status.get("currentStepIndex", 0) >= 2:
            promoted.append(1)  # only a promote moves the canary past its pause
        return reconcile(view)

    obj = manifest({"type": "OnDelete", "rollingUpdate": {"steps": PAUSE}}, "Parallel", annotations=QUORUM_AWARE,
                   replicas=replicas)
    result = run(obj, replicas=replicas, template_changes=1, faults=0, user_actions=1, decide=decide)
    return result.complete, found(result), promoted


def test_a_quorum_aware_canary_of_two_members_keeps_every_invariant() -> None:
    complete, violations, promoted = _explore(2)
    assert complete, "the bounded state space must be exhausted"
    assert violations == {}
    assert promoted, "the explorer promoted a held canary somewhere"


@pytest.mark.slow
def test_a_quorum_aware_canary_of_three_members_keeps_every_invariant() -> None:
    complete, violations, promoted = _explore(3)
    assert complete and violations == {} and promoted
