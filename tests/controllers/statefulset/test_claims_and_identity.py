"""Claims and retention, stale claims, identity repair, adoption and release (reference §4.3-§4.4, §6, §8.6)."""

from __future__ import annotations

import dataclasses

import pytest
from builders import make_set
from harness import Harness

from rollwise.api.features import FeatureGates
from rollwise.api.handover import HANDOVER_ANNOTATION
from rollwise.api.meta import name_of
from rollwise.controllers.plan import CreatePod, PatchOwner, UpdatePod
from rollwise.controllers.statefulset import reconcile
from rollwise.runtime.views import set_view

POLICIES = [("Retain", "Retain"), ("Delete", "Retain"), ("Retain", "Delete"), ("Delete", "Delete")]
IDS = ["Retain-Retain", "Delete-Retain", "Retain-Delete", "Delete-Delete"]


def _owner_kinds(h: Harness, claim: str) -> list[str]:
    refs = h.cluster.get("PersistentVolumeClaim", "default", claim)["metadata"].get("ownerReferences") or []
    return sorted(f"{r['kind']}/{r['name']}" for r in refs)


@pytest.mark.parametrize("retention", POLICIES, ids=IDS)
def test_claims_carry_owner_references_as_the_retention_policy_says(retention: tuple[str, str]) -> None:
    """reference §8.8 item 64 and the §6.2 table: set ref iff whenDeleted=Delete; pod ref iff condemned and
    whenScaled=Delete (and then the set ref goes)."""
    when_scaled, when_deleted = retention
    h = Harness(make_set(replicas=3, retention=retention))
    h.settle()
    for i in range(3):
        assert _owner_kinds(h, f"datadir-foo-{i}") == (["StatefulSet/foo"] if when_deleted == "Delete" else [])
    h.patch_set({"spec": {"replicas": 1}})
    h.sync()  # fixes condemned claims, then deletes foo-2
    h.step_pods()
    h.sync()
    expected_condemned = (["Pod/foo-1"] if when_scaled == "Delete"
                          else (["StatefulSet/foo"] if when_deleted == "Delete" else []))
    assert _owner_kinds(h, "datadir-foo-1") == expected_condemned
    h.settle()
    claims = sorted(name_of(c) for c in h.cluster.list("PersistentVolumeClaim", "default"))
    if when_scaled == "Delete":
        assert claims == ["datadir-foo-0"], "the garbage collector removed the condemned pods' claims"
    else:
        assert claims == ["datadir-foo-0", "datadir-foo-1", "datadir-foo-2"]
    assert _owner_kinds(h, "datadir-foo-0") == (["StatefulSet/foo"] if when_deleted == "Delete" else [])


@pytest.mark.parametrize("retention", POLICIES, ids=IDS)
def test_deleting_the_set_removes_claims_only_when_when_deleted_is_delete(retention: tuple[str, str]) -> None:
    h = Harness(make_set(replicas=2, retention=retention))
    h.settle()
    h.cluster.delete("StatefulSet", "default", "foo")
    for pod in h.cluster.list("Pod", "default"):
        h.cluster.delete("Pod", "default", name_of(pod), grace_period_seconds=0)
    claims = h.cluster.list("PersistentVolumeClaim", "default")
    assert (len(claims) == 0) == (retention[1] == "Delete")


def test_claim_deleted_under_a_pending_pod_is_recreated() -> None:
    h = Harness(make_set(replicas=1))
    h.sync()
    assert h.pod("foo-0")["status"]["phase"] == "Pending"
    h.cluster.delete("PersistentVolumeClaim", "default", "datadir-foo-0")
    h.sync()
    assert h.cluster.get("PersistentVolumeClaim", "default", "datadir-foo-0")


def test_a_stale_claim_blocks_scale_up_until_it_is_collected() -> None:
    """reference §6.3 / §8.6 item 45 (TestStaleOwnerRefOnScaleup)."""
    h = Harness(make_set(replicas=3, retention=("Delete", "Retain")))
    h.settle()
    h.patch_set({"spec": {"replicas": 2}})
    h.cluster.patch("PersistentVolumeClaim", "default", "datadir-foo-2", {"metadata": {"finalizers": ["hold"]}})
    h.settle()
    claim = h.cluster.get("PersistentVolumeClaim", "default", "datadir-foo-2")
    assert claim["metadata"].get("deletionTimestamp") is not None, "collected, held by its finalizer"
    h.patch_set({"spec": {"replicas": 3}})
    for _ in range(5):
        plan = h.sync()
        assert not [c for c in plan.of_type(CreatePod) if name_of(c.pod) == "foo-2"]
        h.step_pods()
    h.cluster.patch("PersistentVolumeClaim", "default", "datadir-foo-2", {"metadata": {"finalizers": None}})
    h.settle()
    assert h.names() == ["foo-0", "foo-1", "foo-2"]


def test_a_claim_owned_by_an_earlier_pod_incarnation_blocks_that_pod_only_under_when_scaled_delete() -> None:
    """reference §6.3: checked on the view alone (the store's garbage collector would remove the claim at once)."""
    for retention, blocked in ((("Delete", "Retain"), True), (("Retain", "Retain"), False)):
        h = Harness(make_set(replicas=3, retention=retention))
        view = set_view(h.cluster, h.sts, now=0.0, gates=FeatureGates())
        stale = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
            "name": "datadir-foo-0", "namespace": "default",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "foo-0", "uid": "old-uid",
                                 "controller": True}]}}
        plan = reconcile(dataclasses.replace(view, claims={"datadir-foo-0": stale}))
        assert bool(plan.of_type(CreatePod)) is not blocked
        if blocked:
            assert "garbage collection" in plan.blocked[0].cause


def test_identity_is_repaired_in_place_when_the_name_label_is_lost() -> None:
    h = Harness(make_set(replicas=2))
    h.settle()
    h.cluster.patch("Pod", "default", "foo-1",
                    {"metadata": {"labels": {"statefulset.kubernetes.io/pod-name": None}}})
    plan = h.sync()
    assert [name_of(u.pod) for u in plan.of_type(UpdatePod)] == ["foo-1"]
    assert h.pod("foo-1")["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "foo-1"
    assert any(e.startswith("SuccessfulUpdate: update Pod foo-1") for e in h.events)


def test_orphan_pods_that_match_are_adopted_and_others_ignored() -> None:
    """reference §8.6 item 41."""
    h = Harness(make_set(replicas=3, policy="Parallel"))
    h.settle()
    h.cluster.patch("Pod", "default", "foo-2", {"metadata": {"ownerReferences": None}})
    h.cluster.create({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "xfoo-4", "labels": {"foo": "bar"}}, "spec": {}})
    h.cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo-7"}, "spec": {}})
    plan = h.sync()
    assert [a.name for a in plan.of_type(PatchOwner)] == ["foo-2"]
    assert "foo-2" in h.names()
    assert "xfoo-4" not in h.names() and "foo-7" not in h.names()


def test_owned_pods_that_no_longer_match_are_released() -> None:
    """reference §8.6 item 42."""
    h = Harness(make_set(replicas=2, policy="Parallel"))
    h.settle()
    h.cluster.patch("Pod", "default", "foo-1", {"metadata": {"labels": {"foo": "other"}}})
    plan = h.sync()
    assert [a.name for a in plan.of_type(PatchOwner)] == ["foo-1"]
    released = h.pod("foo-1")
    assert not released["metadata"].get("ownerReferences")


def test_a_set_being_deleted_adopts_nothing() -> None:
    h = Harness(make_set(replicas=1))
    h.cluster.create({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": "foo-0", "labels": {"foo": "bar"}}, "spec": {}})
    h.cluster.patch("StatefulSet", "default", "foo", {"metadata": {"finalizers": ["hold"]}})
    h.cluster.delete("StatefulSet", "default", "foo")
    assert not h.sync().of_type(PatchOwner)


def test_a_set_handed_over_adopts_nothing_and_writes_no_pod() -> None:
    """The fence ``rollwise migrate`` puts on the set it hands over (api/handover.py): left alone as a set being
    deleted is, though it lacks a pod and an orphan matches."""
    h = Harness(make_set(replicas=3, policy="Parallel"))
    h.settle()
    h.cluster.delete("Pod", "default", "foo-1", grace_period_seconds=0)
    h.cluster.patch("Pod", "default", "foo-2", {"metadata": {"ownerReferences": None}})
    h.cluster.patch("StatefulSet", "default", "foo",
                    {"metadata": {"annotations": {HANDOVER_ANNOTATION: "statefulset.apps.rollwise.dev/foo"}}})
    plan = h.sync()
    assert not plan.of_type(PatchOwner) and not plan.of_type(CreatePod)
    assert sorted(name_of(p) for p in h.cluster.list("Pod")) == ["foo-0", "foo-2"]
    assert not h.pod("foo-2")["metadata"].get("ownerReferences")


@pytest.mark.parametrize("value", ["statefulset.apps.rollwise.dev/foo", ""])
def test_a_fenced_set_says_in_its_progressing_condition_that_it_is_handed_over(value: str) -> None:
    """The fence leaves a set's pods alone for as long as it stands: put by hand, or left by a migrate stopped
    half-way, it would hold a missing pod missing forever while Progressing said only "2 of 3 replicas"; it names
    the annotation that holds it, so `rollwise get` and `status` say why and what to remove."""
    h = Harness(make_set(replicas=3))
    h.settle()
    h.cluster.delete("Pod", "default", "foo-1", grace_period_seconds=0)
    h.cluster.patch("StatefulSet", "default", "foo", {"metadata": {"annotations": {HANDOVER_ANNOTATION: value}}})
    plan = h.sync()
    assert not plan.of_type(CreatePod)
    progressing = next(c for c in h.status()["conditions"] if c["type"] == "Progressing")
    assert HANDOVER_ANNOTATION in progressing["message"] and "until the annotation is removed" in progressing["message"]
    assert [b.pod for b in plan.blocked] == [""]
    assert h.sync().actions == (), "a fenced set's status is written once"
    h.cluster.patch("StatefulSet", "default", "foo", {"metadata": {"annotations": {HANDOVER_ANNOTATION: None}}})
    assert [name_of(a.pod) for a in h.sync().of_type(CreatePod)] == ["foo-1"]


def test_orphan_revisions_are_adopted() -> None:
    h = Harness(make_set(replicas=1))
    h.settle()
    rev = h.revisions()[0]
    h.cluster.patch("ControllerRevision", "default", name_of(rev), {"metadata": {"ownerReferences": None}})
    plan = h.sync()
    assert [a.name for a in plan.of_type(PatchOwner)] == [name_of(rev)]
    assert h.cluster.get("ControllerRevision", "default", name_of(rev))["metadata"]["ownerReferences"]


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_scale_down_reversed_while_the_pod_terminates_keeps_its_claim(policy: str) -> None:
    """whenScaled=Delete: the condemned pod's claim is owned by the pod. When the ordinal comes back into range
    before the pod is gone, the pod reference must be dropped at once, even while a lower pod blocks an OrderedReady
    set, or the garbage collector deletes the claim of an in-range ordinal with the pod."""
    h = Harness(make_set(replicas=3, retention=("Delete", "Retain"), policy=policy))
    h.settle()
    h.patch_set({"spec": {"replicas": 2}})
    h.sync()  # fixes the condemned claim and deletes foo-2, which stays terminating
    assert _owner_kinds(h, "datadir-foo-2") == ["Pod/foo-2"]
    assert h.pod("foo-2")["metadata"].get("deletionTimestamp") is not None
    h.set_status("foo-0", phase="Running", ready=False)  # an unhealthy lower pod stops OrderedReady's phase A
    h.patch_set({"spec": {"replicas": 3}})
    h.sync()
    assert _owner_kinds(h, "datadir-foo-2") == []
    h.finish_termination("foo-2")
    assert h.cluster.get("PersistentVolumeClaim", "default", "datadir-foo-2")
