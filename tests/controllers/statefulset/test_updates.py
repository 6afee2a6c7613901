"""Revisions, rolling updates, partition, OnDelete, minReadySeconds and rollback (reference §8.2-§8.4)."""

from __future__ import annotations

import pytest
from builders import make_set
from harness import Harness

from rollwise.api.meta import name_of
from rollwise.api.predicates import is_running_and_ready
from rollwise.controllers.plan import CreateRevision, DeletePod, UpdateRevision

POLICIES = ["OrderedReady", "Parallel"]


def _roll(h: Harness, *, max_syncs: int = 300) -> list[str]:
    """Drive a rollout to the end; returns the deletion order."""
    order: list[str] = []
    for _ in range(max_syncs):
        plan = h.sync()
        order += [d.name for d in plan.of_type(DeletePod)]
        busy = any(not is_running_and_ready(p) or p["metadata"].get("deletionTimestamp") for p in h.pods())
        if not plan.actions and not busy:
            return order
        h.step_pods()
    raise AssertionError("rollout did not finish")


def test_first_sync_creates_one_revision_used_as_current_and_update() -> None:
    h = Harness(make_set(replicas=1))
    plan = h.sync()
    assert len(plan.of_type(CreateRevision)) == 1
    (rev,) = h.revisions()
    assert rev["revision"] == 1
    assert h.status()["currentRevision"] == h.status()["updateRevision"] == name_of(rev)


def test_template_change_creates_a_new_revision_and_keeps_the_current_one() -> None:
    h = Harness(make_set(replicas=1))
    h.settle()
    h.set_image("nginx:2")
    h.sync()
    revs = sorted(h.revisions(), key=lambda r: r["revision"])
    assert [r["revision"] for r in revs] == [1, 2]
    assert h.status()["currentRevision"] == name_of(revs[0])
    assert h.status()["updateRevision"] == name_of(revs[1])


def test_unchanged_template_creates_no_revision_and_no_writes() -> None:
    h = Harness(make_set(replicas=2))
    h.settle()
    before = h.cluster.write_count("statefulset-controller")
    plan = h.sync()
    assert plan.actions == ()
    assert h.cluster.write_count("statefulset-controller") == before


def test_rollback_to_an_earlier_template_reuses_its_revision_with_the_next_number() -> None:
    h = Harness(make_set(replicas=1))
    h.settle()
    first = h.status()["updateRevision"]
    h.set_image("nginx:2")
    h.settle()
    h.set_image("nginx:3")
    h.settle()
    h.set_image("nginx")
    plan = h.sync()
    assert len(plan.of_type(UpdateRevision)) == 1 and not plan.of_type(CreateRevision)
    assert h.status()["updateRevision"] == first
    reused = h.cluster.get("ControllerRevision", "default", first)
    assert reused["revision"] == 4
    h.settle()
    assert set(h.images().values()) == {"nginx"}


@pytest.mark.parametrize("limit", [0, 2, 5])
def test_history_is_pruned_to_the_limit_plus_current_and_update(limit: int) -> None:
    h = Harness(make_set(replicas=2, revisionHistoryLimit=limit))
    h.settle()
    for i in range(8):
        h.set_image(f"nginx:{i}")
        h.settle()
        assert len(h.revisions()) <= limit + 2


def test_negative_history_limit_keeps_every_revision() -> None:
    h = Harness(make_set(replicas=1, revisionHistoryLimit=-2))
    h.settle()
    for i in range(5):
        h.set_image(f"nginx:{i}")
        h.settle()
    assert len(h.revisions()) == 6


def test_history_never_prunes_a_revision_a_pod_still_runs() -> None:
    h = Harness(make_set(replicas=3, revisionHistoryLimit=0, updateStrategy={"type": "OnDelete"}))
    h.settle()
    h.set_image("nginx:2")
    h.settle()
    h.set_image("nginx:3")
    h.settle()
    used = set(h.pod_revisions().values())
    assert used <= {name_of(r) for r in h.revisions()}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("replicas_after", [3, 5, 2], ids=["image-only", "scale-up", "scale-down"])
def test_rolling_update_brings_every_pod_to_the_new_image(policy: str, replicas_after: int) -> None:
    h = Harness(make_set(replicas=3, policy=policy))
    h.settle()
    h.set_image("nginx:2")
    h.patch_set({"spec": {"replicas": replicas_after}})
    _roll(h)
    assert set(h.images().values()) == {"nginx:2"}
    assert len(h.pods()) == replicas_after
    status = h.status()
    assert status["currentRevision"] == status["updateRevision"]
    assert status["currentReplicas"] == replicas_after


def test_ordered_rolling_update_goes_from_the_highest_ordinal_one_pod_at_a_time() -> None:
    h = Harness(make_set(replicas=3))
    h.settle()
    h.set_image("nginx:2")
    assert _roll(h) == ["foo-2", "foo-1", "foo-0"]


@pytest.mark.parametrize("policy", POLICIES)
def test_partition_keeps_pods_below_it_at_the_old_revision(policy: str) -> None:
    h = Harness(make_set(replicas=5, policy=policy,
                         strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}))
    h.settle()
    h.set_image("nginx:2")
    _roll(h)
    assert h.images() == {"foo-0": "nginx", "foo-1": "nginx", "foo-2": "nginx:2", "foo-3": "nginx:2",
                          "foo-4": "nginx:2"}
    status = h.status()
    assert status["currentRevision"] != status["updateRevision"], "a partitioned rollout never completes"


def test_a_deleted_pod_below_the_partition_comes_back_at_the_current_revision() -> None:
    h = Harness(make_set(replicas=3, strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}))
    h.settle()
    h.set_image("nginx:2")
    _roll(h)
    h.cluster.delete("Pod", "default", "foo-0", grace_period_seconds=0)
    h.cluster.delete("Pod", "default", "foo-2", grace_period_seconds=0)
    _roll(h)
    assert h.images() == {"foo-0": "nginx", "foo-1": "nginx", "foo-2": "nginx:2"}


def test_lowering_the_partition_step_by_step_finishes_the_rollout() -> None:
    h = Harness(make_set(replicas=3, strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 3}}))
    h.settle()
    h.set_image("nginx:2")
    _roll(h)
    assert set(h.images().values()) == {"nginx"}
    for partition, updated in ((2, ["foo-2"]), (1, ["foo-1", "foo-2"]), (0, ["foo-0", "foo-1", "foo-2"])):
        h.patch_set({"spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}}})
        _roll(h)
        assert sorted(n for n, img in h.images().items() if img == "nginx:2") == updated
    assert h.status()["currentRevision"] == h.status()["updateRevision"]


def test_on_delete_changes_no_pod_until_it_is_deleted_and_then_promotes_the_revision() -> None:
    h = Harness(make_set(replicas=3, updateStrategy={"type": "OnDelete"}))
    h.settle()
    h.set_image("nginx:2")
    _roll(h)
    assert set(h.images().values()) == {"nginx"}
    h.patch_set({"spec": {"replicas": 5}})
    _roll(h)
    assert h.images()["foo-3"] == h.images()["foo-4"] == "nginx:2"
    for name in ("foo-0", "foo-1", "foo-2"):
        h.cluster.delete("Pod", "default", name, grace_period_seconds=0)
    _roll(h)
    assert set(h.images().values()) == {"nginx:2"}
    status = h.status()
    # #136833 (1.36): OnDelete promotes currentRevision too.
    assert status["currentRevision"] == status["updateRevision"]
    assert status["currentReplicas"] == 5


def test_rolling_update_waits_for_min_ready_seconds_before_the_next_pod() -> None:
    h = Harness(make_set(replicas=2, policy="Parallel", min_ready_seconds=30))
    h.settle()
    h.now = 100.0
    h.set_image("nginx:2")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-1"]
    h.finish_termination("foo-1")
    h.sync()
    h.make_ready("foo-1")  # Ready at t=100
    plan = h.sync()
    assert not plan.of_type(DeletePod), "foo-1 is Ready but not yet available"
    assert plan.requeue_after is not None and 30 < plan.requeue_after < 31
    assert h.status()["availableReplicas"] == 1
    h.now = 130.5
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-0"]


def test_scale_down_waits_for_min_ready_seconds() -> None:
    h = Harness(make_set(replicas=3))
    h.settle()  # every pod Ready at t=0
    h.now = 10.0
    h.patch_set({"spec": {"replicas": 1, "minReadySeconds": 30}})
    assert not h.sync().of_type(DeletePod)
    assert h.status()["availableReplicas"] == 0
    h.now = 31.0
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-2"]


def test_current_revision_is_promoted_only_once_every_replica_is_available() -> None:
    """#136831: promotion must wait for minReadySeconds, not just Ready."""
    h = Harness(make_set(replicas=1, min_ready_seconds=30))
    h.settle()
    h.now = 100.0
    h.set_image("nginx:2")
    _roll(h)
    status = h.status()
    assert status["readyReplicas"] == 1 and status["availableReplicas"] == 0
    assert status["currentRevision"] != status["updateRevision"]
    h.now = 200.0
    h.sync()
    assert h.status()["currentRevision"] == h.status()["updateRevision"]


def test_max_unavailable_two_with_partition_three_deletes_two_pods_together() -> None:
    """reference §8.3 item 21: 6 replicas, partition 3, maxUnavailable 2."""
    h = Harness(make_set(replicas=6, policy="Parallel", strategy={
        "type": "RollingUpdate", "rollingUpdate": {"partition": 3, "maxUnavailable": 2}}))
    h.settle()
    h.set_image("nginx:2")
    assert sorted(d.name for d in h.sync().of_type(DeletePod)) == ["foo-4", "foo-5"]
    h.finish_termination("foo-4")
    h.finish_termination("foo-5")
    h.sync()
    assert len(h.pods()) == 6
    h.make_ready("foo-4")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-3"]
    _roll(h)
    assert [n for n, img in sorted(h.images().items()) if img == "nginx:2"] == ["foo-3", "foo-4", "foo-5"]


def test_ordered_ready_max_unavailable_recreates_in_order_after_a_batch_deletion() -> None:
    h = Harness(make_set(replicas=6, strategy={
        "type": "RollingUpdate", "rollingUpdate": {"partition": 3, "maxUnavailable": 2}}))
    h.settle()
    h.set_image("nginx:2")
    assert sorted(d.name for d in h.sync().of_type(DeletePod)) == ["foo-4", "foo-5"]
    h.finish_termination("foo-4")
    h.finish_termination("foo-5")
    h.sync()
    assert h.names() == ["foo-0", "foo-1", "foo-2", "foo-3", "foo-4"], "pod 5 waits for pod 4 (KEP-961 choice 1)"


def test_an_update_never_deletes_a_pod_that_would_come_back_at_its_own_revision() -> None:
    """No rollingUpdate block, Parallel: a pod a user deleted mid-rollout is recreated at the current revision
    (reference §4.5); deleting it again before the current-revision pods above it are replaced is a livelock."""
    h = Harness(make_set(replicas=3, policy="Parallel", strategy={"type": "RollingUpdate"}))
    h.settle()
    h.set_image("nginx:2")
    h.sync()  # deletes foo-2
    h.cluster.delete("Pod", "default", "foo-0", grace_period_seconds=0)  # a user, mid-rollout
    h.finish_termination("foo-2")
    h.sync()  # recreates foo-0 (current revision) and foo-2 (update revision)
    old, new = h.status()["currentRevision"], h.status()["updateRevision"]
    assert h.pod_revisions() == {"foo-0": old, "foo-1": old, "foo-2": new}
    for _ in range(3):
        plan = h.sync()
        assert "foo-0" not in [d.name for d in plan.of_type(DeletePod)]
    h.settle()
    assert set(h.pod_revisions().values()) == {new}
