"""The operator's companion on plain apps/v1 sets (operator-plan §2): the same decisions as the pure controller,
but its condition lives in its own set annotation, never in the status kube-controller-manager owns."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from quorum_views import NEW, NOW, leases_for, member, quorum_set, view_of

from rollwise.cluster.quorum_status import decode, encode
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET
from rollwise.controllers.plan import DeletePod, EmitEvent, PatchSet, WriteStatus
from rollwise.controllers.quorum import ALL_MEMBERS_UPDATED, WAITING_EVENT, reconcile_quorum
from rollwise.runtime.companion import STATUS_ANNOTATION, reconcile_companion
from rollwise.runtime.registrations import QUORUM, operator_decision


def _annotated(sts: dict[str, Any], plan_actions: tuple[Any, ...]) -> dict[str, Any]:
    (patch,) = [a for a in plan_actions if isinstance(a, PatchSet)]
    notes = {**sts["metadata"].get("annotations", {}), **patch.merge["metadata"]["annotations"]}
    return {**sts, "metadata": {**sts["metadata"], "annotations": notes}}


def test_companion_deletes_as_the_pure_controller_and_writes_no_status() -> None:
    view = view_of(quorum_set(), [member(0), member(1), member(2)], leases_for(3, 0))
    pure = reconcile_quorum(view)
    plan = reconcile_companion(view)
    assert [a.name for a in plan.of_type(DeletePod)] == [a.name for a in pure.of_type(DeletePod)] == ["etcd-2"]
    assert not plan.of_type(WriteStatus)
    (patch,) = plan.of_type(PatchSet)
    assert set(patch.merge) == {"metadata"}, "only its own annotation"
    doc = json.loads(patch.merge["metadata"]["annotations"][STATUS_ANNOTATION])
    (stored,) = doc["conditions"]
    assert (stored["type"], stored["status"]) == (ALL_MEMBERS_UPDATED, "False")
    assert doc["updateRevision"] == view.set["status"]["updateRevision"]
    assert doc.get("observedGeneration") == view.set["metadata"].get("generation")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stored["lastTransitionTime"]), "RFC 3339, not epoch"


def test_the_annotation_written_by_earlier_versions_is_still_read() -> None:
    earlier = json.dumps([{"type": ALL_MEMBERS_UPDATED, "status": "False", "reason": "UpdateInProgress",
                           "message": "m", "lastTransitionTime": 1764104645.25}])
    state = decode(earlier)
    assert state.conditions[0]["lastTransitionTime"] == 1764104645.25 and state.update_revision is None
    again = decode(encode(state))
    assert again.conditions[0]["lastTransitionTime"] == 1764104645.0, "whole seconds, as metav1.Time"


@pytest.mark.parametrize("text", ['{"conditions": 5}', '{"conditions": [{"type": "AllMembersUpdated", "status": '
                                  '"True", "lastTransitionTime": "yesterday"}]}', "7", '{"updateRevision": 3}'])
def test_a_mangled_companion_state_reads_as_much_as_it_can(text: str) -> None:
    state = decode(text)
    assert all(isinstance(c.get("lastTransitionTime", 0.0), float) for c in state.conditions)


def test_companion_remembers_a_wait_in_its_annotation_so_a_long_hold_is_one_event() -> None:
    pods = [member(0), member(1), member(2, "unready", rev=NEW)]
    sts = quorum_set()
    first = reconcile_companion(view_of(sts, pods))
    assert [e.event_reason for e in first.of_type(EmitEvent)] == [WAITING_EVENT]
    sts = _annotated(sts, first.actions)
    again = reconcile_companion(view_of(sts, pods, now=NOW + 30))
    assert again.actions == ()


def test_companion_keeps_other_conditions_in_the_status_untouched() -> None:
    sts = quorum_set()
    before = json.dumps(sts["status"], sort_keys=True)
    reconcile_companion(view_of(sts, [member(o, rev=NEW) for o in range(3)]))
    assert json.dumps(sts["status"], sort_keys=True) == before


def test_a_hand_edited_annotation_is_ignored_not_fatal() -> None:
    sts = quorum_set(notes={STATUS_ANNOTATION: "{not json"})
    plan = reconcile_companion(view_of(sts, [member(0), member(1), member(2)], leases_for(3, 0)))
    assert [a.name for a in plan.of_type(DeletePod)] == ["etcd-2"]


def test_the_tables_quorum_row_decides_as_the_companion_for_the_operators_apps_v1_sets_only() -> None:
    view = view_of(quorum_set(), [member(0), member(1), member(2)], leases_for(3, 0))
    on_apps_v1 = operator_decision(QUORUM, STATEFULSET)(view)
    assert on_apps_v1.of_type(PatchSet) and not on_apps_v1.of_type(WriteStatus)
    assert operator_decision(QUORUM, ROLLWISE_STATEFULSET)(view).of_type(WriteStatus), "the custom kind's own status"
    assert QUORUM.decide(view).of_type(WriteStatus), "the simulator and up share the status with their controller"


def test_the_operator_chooses_no_decision_of_its_own() -> None:
    operator = Path(__file__).resolve().parents[3] / "src" / "rollwise" / "operator"
    decisions = r"\breconcile_(companion|quorum)\b|^from rollwise\.controllers\.statefulset import reconcile\b"
    chosen = [p.name for p in operator.rglob("*.py")
              if re.search(decisions, p.read_text(encoding="utf-8"), re.MULTILINE)]
    assert chosen == [], "the operator's chains and decisions come from runtime/registrations.py"
