"""The rollout view: what every face (terminal, dashboard, ``simulate --live``) shows of a set's objects."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_pod, make_set, revision_for, with_image

from rollwise.api.leases import format_holder
from rollwise.api.meta import Obj
from rollwise.controllers.quorum.settings import QUORUM_AWARE_POLICY, UPDATE_POLICY
from rollwise.projection import project

NOW = 100.0


def _status(sts: Obj, old: Obj, new: Obj, *, updated: int, ready: int, progressing: dict[str, Any]) -> Obj:
    sts["status"] = {"observedGeneration": sts["metadata"]["generation"], "replicas": 3,
                     "currentRevision": old["metadata"]["name"], "updateRevision": new["metadata"]["name"],
                     "currentReplicas": 3 - updated, "updatedReplicas": updated, "readyReplicas": ready,
                     "availableReplicas": ready, "conditions": [{"type": "Progressing", **progressing}]}
    return sts


def _broken(pod: Obj) -> Obj:
    pod["status"] = {"phase": "Pending", "containerStatuses": [
        {"name": "nginx", "ready": False, "restartCount": 0,
         "state": {"waiting": {"reason": "ImagePullBackOff", "message": "not found"}}}]}
    return pod


def _stuck() -> tuple[Obj, list[Obj], list[Obj]]:
    """web-2 at the update revision cannot pull its image; web-0 and web-1 still run the old one."""
    old_set = make_set("web", image="nginx:1.26")
    old = revision_for(old_set, 1)
    sts = with_image(old_set, "nginx:typo")
    new = revision_for(sts, 2)
    pods = [make_pod(sts, 0, revision=old), make_pod(sts, 1, revision=old), _broken(make_pod(sts, 2, revision=new))]
    _status(sts, old, new, updated=1, ready=2, progressing={
        "status": "True", "reason": "RolloutInProgress",
        "message": "waiting for web-2 to become available: container nginx is ImagePullBackOff"})
    return sts, pods, [old, new]


def test_a_stuck_rollout_names_the_pod_it_waits_on_and_why() -> None:
    sts, pods, revisions = _stuck()
    view = project(sts, kind="sts", pods=pods, revisions=revisions, now=NOW)
    assert (view.state, view.icon, view.done, view.failed) == ("Progressing", "◌", False, False)
    assert view.waiting_on == "web-2"
    assert view.message == "waiting for web-2 to become available: container nginx is ImagePullBackOff"
    row = view.pods[2]
    assert (row.status, row.icon, row.tag, row.waited_on) == ("ImagePullBackOff", "✖", "update", True)
    assert row.why == "container nginx is ImagePullBackOff"
    assert [r.tag for r in view.pods[:2]] == ["current", "current"]
    assert view.update_revision is not None and view.update_revision.images == ("nginx:typo",)
    assert view.current_revision is not None and view.current_revision.images == ("nginx:1.26",)


def test_a_complete_rollout_is_healthy_by_the_shared_rule() -> None:
    sts = make_set("web")
    rev = revision_for(sts)
    pods = [make_pod(sts, o, revision=rev) for o in range(3)]
    _status(sts, rev, rev, updated=3, ready=3, progressing={"status": "True", "reason": "RolloutInProgress"})
    view = project(sts, kind="rsts", pods=pods, revisions=[rev], now=NOW)
    assert (view.state, view.icon, view.done, view.waiting_on) == ("Healthy", "✔", True, "")
    assert all(r.icon == "✔" and r.tag == "update" for r in view.pods)


def test_an_unobserved_generation_is_not_complete_even_if_the_pods_look_done() -> None:
    sts = make_set("web")
    rev = revision_for(sts)
    pods = [make_pod(sts, o, revision=rev) for o in range(3)]
    _status(sts, rev, rev, updated=3, ready=3, progressing={"status": "True", "reason": "RolloutComplete"})
    sts["metadata"]["generation"] = 2
    view = project(sts, kind="sts", pods=pods, revisions=[rev], now=NOW)
    assert not view.done
    assert view.message == "waiting for the controller to observe the latest spec"


def test_a_rollout_held_at_its_partition_is_complete() -> None:
    old_set = make_set("web", strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    old = revision_for(old_set, 1)
    sts = with_image(old_set, "nginx:2")
    new = revision_for(sts, 2)
    pods = [make_pod(sts, 0, revision=old), make_pod(sts, 1, revision=old), make_pod(sts, 2, revision=new)]
    _status(sts, old, new, updated=1, ready=3, progressing={"status": "True", "reason": "RolloutInProgress"})
    view = project(sts, kind="sts", pods=pods, revisions=[old, new], now=NOW)
    assert view.done
    assert view.message == "rollout complete: 1 pods at revision " + new["metadata"]["name"] + \
        ", the rest held at partition 2"


@pytest.mark.parametrize("reason", ["ProgressDeadlineExceeded", "SafetyHalt", "InvalidSpec"])
def test_a_failed_progressing_condition_degrades_the_rollout(reason: str) -> None:
    sts, pods, revisions = _stuck()
    sts["status"]["conditions"] = [{"type": "Progressing", "status": "False", "reason": reason,
                                    "message": "no progress for 300 s: waiting for web-2 to become available"}]
    view = project(sts, kind="sts", pods=pods, revisions=revisions, now=NOW)
    assert (view.state, view.icon, view.failed) == ("Degraded", "✖", True)
    assert view.message.startswith(f"{reason}: no progress for 300 s")
    assert view.waiting_on == "web-2"


def test_a_controller_reason_for_completion_counts_as_done() -> None:
    sts, pods, revisions = _stuck()
    sts["status"]["conditions"] = [{"type": "Progressing", "status": "True", "reason": "PartitionRolledOut",
                                    "message": "held at the partition"}]
    assert project(sts, kind="sts", pods=pods, revisions=revisions, now=NOW).done


def test_roles_come_from_member_leases() -> None:
    sts = make_set("etcd", strategy={"type": "OnDelete"})
    sts["metadata"]["annotations"] = {UPDATE_POLICY: QUORUM_AWARE_POLICY}
    rev = revision_for(sts)
    pods = [make_pod(sts, o, revision=rev) for o in range(3)]
    leases = [{"metadata": {"name": f"etcd-{o}", "namespace": "default"},
               "spec": {"holderIdentity": format_holder(f"{o:016x}", "c1", "Leader" if o == 1 else "Member")}}
              for o in range(2)]
    _status(sts, rev, rev, updated=3, ready=3, progressing={"status": "True", "reason": "RolloutComplete"})
    view = project(sts, kind="sts", pods=pods, revisions=[rev], leases=leases, now=NOW)
    assert [r.role for r in view.pods] == ["follower", "leader", ""]
    assert view.strategy == "OnDelete (QuorumAware)"
    assert view.budget == ""


def test_a_missing_ordinal_shows_as_waiting_to_start() -> None:
    sts, pods, revisions = _stuck()
    view = project(sts, kind="sts", pods=pods[:2], revisions=revisions, now=NOW)
    row = view.pods[2]
    assert (row.exists, row.status, row.icon, row.waited_on) == (False, "Missing", "◷", True)


def test_only_the_sets_own_events_are_kept_oldest_first() -> None:
    sts, pods, revisions = _stuck()
    events = [
        {"involvedObject": {"kind": "Pod", "name": "web-2"}, "type": "Warning", "reason": "Failed",
         "message": "Failed to pull image", "lastTimestamp": 90.0},
        {"involvedObject": {"kind": "StatefulSet", "name": "web"}, "type": "Normal", "reason": "SuccessfulCreate",
         "message": "create Pod web-2", "lastTimestamp": 80.0},
        {"involvedObject": {"kind": "Pod", "name": "db-0"}, "type": "Normal", "reason": "Pulled",
         "message": "other set", "lastTimestamp": 85.0},
    ]
    view = project(sts, kind="sts", pods=pods, revisions=revisions, events=events, now=NOW)
    assert [(e.reason, e.object) for e in view.events] == [("SuccessfulCreate", "StatefulSet/web"),
                                                            ("Failed", "Pod/web-2")]


def test_the_view_is_json_ready() -> None:
    import json

    sts, pods, revisions = _stuck()
    doc = project(sts, kind="sts", pods=pods, revisions=revisions, now=NOW).to_json()
    assert json.loads(json.dumps(doc))["title"] == "sts/web"
    assert doc["pods"][2]["name"] == "web-2"


def test_a_quorum_aware_wait_is_explained_by_the_quorum_controllers_condition() -> None:
    old_set = make_set("etcd", strategy={"type": "OnDelete"})
    old_set["metadata"]["annotations"] = {UPDATE_POLICY: QUORUM_AWARE_POLICY}
    old = revision_for(old_set, 1)
    sts = with_image(old_set, "etcd:3.5")
    new = revision_for(sts, 2)
    pods = [make_pod(sts, 0, revision=new), make_pod(sts, 1, revision=new, ready=False),
            make_pod(sts, 2, revision=old)]
    _status(sts, old, new, updated=2, ready=2, progressing={
        "status": "True", "reason": "RolloutInProgress", "message": "2 of 3 replicas at revision etcd-2"})
    sts["status"]["conditions"].append({"type": "AllMembersUpdated", "status": "False", "reason": "InProgress",
                                        "message": "waiting for etcd-1: updated but not participating"})
    view = project(sts, kind="sts", pods=pods, revisions=[old, new], now=NOW)
    assert (view.state, view.waiting_on) == ("Progressing", "etcd-1")
    assert view.message == "waiting for etcd-1: updated but not participating"
    assert view.pods[1].why == "not Ready"


def test_a_paused_set_shows_paused_in_the_header() -> None:
    old_set = make_set("web", image="nginx:1.26")
    old = revision_for(old_set, 1)
    sts = with_image(old_set, "nginx:1.27")
    sts["spec"]["paused"] = True
    new = revision_for(sts, 2)
    pods = [make_pod(sts, o, revision=old) for o in range(3)]
    _status(sts, old, new, updated=0, ready=3, progressing={
        "status": "Unknown", "reason": "RolloutPaused", "message": "rollout paused: 3 pods stay at their revision"})
    view = project(sts, kind="sts", pods=pods, revisions=[old, new], now=NOW)
    assert (view.state, view.done) == ("Paused", False)
    assert view.message == "paused (spec.paused): 3 pods stay at an old revision until resumed (rollwise rollout " \
                           "resume)"
