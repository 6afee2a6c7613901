"""Recreate (seed 000): delete every old pod at once, wait until all are gone, then create by policy."""

from __future__ import annotations

import pytest
from builders import make_pod, make_set, revision_for, with_image
from harness import Harness

from rollwise.api.identity import revision_of
from rollwise.api.meta import name_of
from rollwise.api.predicates import is_terminating
from rollwise.controllers.plan import CreatePod, DeletePod, EmitEvent
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView

POLICIES = ["OrderedReady", "Parallel"]


def recreate_set(policy: str, replicas: int = 3) -> Harness:
    h = Harness(make_set(replicas=replicas, policy=policy, updateStrategy={"type": "Recreate"}))
    h.settle()
    return h


@pytest.mark.parametrize("policy", POLICIES)
def test_template_change_deletes_every_old_pod_at_once(policy: str) -> None:
    h = recreate_set(policy)
    h.set_image("nginx:2")
    plan = h.sync()
    assert sorted(d.name for d in plan.of_type(DeletePod)) == ["foo-0", "foo-1", "foo-2"]
    assert not plan.of_type(CreatePod)
    assert [e.event_reason for e in plan.of_type(EmitEvent)] == ["RecreateStarted"]
    progressing = next(c for c in h.status()["conditions"] if c["type"] == "Progressing")
    assert progressing["reason"] == "RecreateInProgress"


@pytest.mark.parametrize("policy", POLICIES)
def test_nothing_is_created_while_any_old_pod_is_terminating(policy: str) -> None:
    h = recreate_set(policy)
    h.set_image("nginx:2")
    h.sync()
    h.finish_termination("foo-0")
    h.finish_termination("foo-1")
    plan = h.sync()
    assert not plan.of_type(CreatePod) and not plan.of_type(DeletePod)
    assert "waiting for 1 old-revision pods to terminate: foo-2" in str(plan.blocked[0])
    h.finish_termination("foo-2")
    created = [c.pod["metadata"]["name"] for c in h.sync().of_type(CreatePod)]
    assert created == (["foo-0"] if policy == "OrderedReady" else ["foo-0", "foo-1", "foo-2"])


def test_ordered_ready_recreation_waits_for_each_predecessor() -> None:
    h = recreate_set("OrderedReady")
    h.set_image("nginx:2")
    h.sync()
    for name in ("foo-0", "foo-1", "foo-2"):
        h.finish_termination(name)
    order = []
    for _ in range(10):
        order += [c.pod["metadata"]["name"] for c in h.sync().of_type(CreatePod)]
        h.step_pods()
    assert order == ["foo-0", "foo-1", "foo-2"]
    assert set(h.images().values()) == {"nginx:2"}
    progressing = next(c for c in h.status()["conditions"] if c["type"] == "Progressing")
    assert progressing["reason"] == "RecreateComplete"


@pytest.mark.parametrize("policy", POLICIES)
def test_old_and_new_pods_never_coexist(policy: str) -> None:
    h = recreate_set(policy, replicas=4)
    h.set_image("nginx:2")
    update = None
    for _ in range(40):
        h.sync()
        update = h.status()["updateRevision"]
        revisions = {revision_of(p) for p in h.pods()}
        assert len(revisions) <= 1 or update not in revisions, revisions
        h.step_pods()
    assert {revision_of(p) for p in h.pods()} == {update}


def test_stuck_pods_are_replaced_whatever_their_state_and_claims_are_kept() -> None:
    h = recreate_set("OrderedReady")
    h.set_image("nginx:typo")
    h.sync()
    for name in ("foo-0", "foo-1", "foo-2"):
        h.finish_termination(name)
    h.sync()  # foo-0 created at the typo revision and stays Pending
    assert h.names() == ["foo-0"]
    h.set_image("nginx:fixed")
    plan = h.sync()
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-0"]
    claims = sorted(name_of(c) for c in h.cluster.list("PersistentVolumeClaim", "default"))
    assert claims == ["datadir-foo-0", "datadir-foo-1", "datadir-foo-2"]


def test_orphans_out_of_range_are_deleted_with_the_old_pods() -> None:
    h = recreate_set("Parallel", replicas=4)
    h.patch_set({"spec": {"replicas": 2}})
    h.set_image("nginx:2")
    plan = h.sync()
    assert sorted(d.name for d in plan.of_type(DeletePod)) == ["foo-0", "foo-1", "foo-2", "foo-3"]


def test_changing_only_the_strategy_type_starts_no_rollout() -> None:
    h = Harness(make_set(replicas=3))
    h.settle()
    h.patch_set({"spec": {"updateStrategy": {"type": "Recreate", "rollingUpdate": None}}})
    plan = h.sync()
    assert not plan.of_type(DeletePod) and not plan.of_type(CreatePod)


PHASES = {
    # phase: (pods as (ordinal, at new revision?, terminating?)), expected deletions, expected creations
    "NeedsDeletion": ([(0, False, False), (1, False, True), (2, False, False)], ["foo-0", "foo-2"], []),
    "WaitingTermination": ([(0, False, True), (1, False, True)], [], []),
    "ReadyForCreation": ([(0, True, False)], [], ["foo-1"]),
    "Complete": ([(0, True, False), (1, True, False), (2, True, False)], [], []),
}


@pytest.mark.parametrize("phase", list(PHASES))
def test_a_fresh_controller_resumes_correctly_in_every_phase(phase: str) -> None:
    """KEP-3541: a controller restarted in any phase picks up where the cluster stands (it remembers nothing)."""
    sts = make_set(replicas=3, updateStrategy={"type": "Recreate"})
    old = revision_for(sts, 1)
    new_set = with_image(sts, "nginx:2")
    new = revision_for(new_set, 2)
    layout, deletions, creations = PHASES[phase]
    pods = tuple(make_pod(new_set, o, revision=new if at_new else old, terminating=term)
                 for o, at_new, term in layout)
    status = {"currentRevision": old["metadata"]["name"], "updateRevision": new["metadata"]["name"],
              "observedGeneration": 2, "collisionCount": 0}
    plan = reconcile(SetView(set={**new_set, "status": status}, pods=pods, revisions=(old, new), now=10.0))
    assert sorted(d.name for d in plan.of_type(DeletePod)) == deletions
    assert [c.pod["metadata"]["name"] for c in plan.of_type(CreatePod)] == creations
    if phase == "WaitingTermination":
        assert all(is_terminating(p) for p in pods)
