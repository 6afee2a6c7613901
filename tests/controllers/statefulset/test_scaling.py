"""Creation, scaling, replacement and ordinals (reference §8.1, §8.2, §8.6)."""

from __future__ import annotations

import itertools

import pytest
from builders import make_set
from harness import Harness

from rollwise.api.errors import InternalError
from rollwise.api.identity import POD_INDEX_LABEL
from rollwise.api.meta import labels, name_of
from rollwise.api.predicates import is_running_and_ready, is_terminating
from rollwise.controllers.plan import CreatePod, DeletePod

POLICIES = ["OrderedReady", "Parallel"]
RETENTION = [("Retain", "Retain"), ("Delete", "Retain"), ("Retain", "Delete"), ("Delete", "Delete"), None]
RETENTION_IDS = ["Retain-Retain", "Delete-Retain", "Retain-Delete", "Delete-Delete", "nil"]


def _monotonic_ok(h: Harness) -> None:
    """No pod is Ready while its predecessor is not, and pods are dense from the start ordinal (reference §8)."""
    pods = h.pods()
    names = [name_of(p) for p in pods]
    assert names == [f"foo-{i}" for i in range(len(pods))]
    for prev, cur in itertools.pairwise(pods):
        assert not (is_running_and_ready(cur) and not is_running_and_ready(prev))


@pytest.mark.parametrize("retention", RETENTION, ids=RETENTION_IDS)
def test_ordered_ready_creates_ordinal_k_plus_1_only_after_k_is_ready(retention: tuple[str, str] | None) -> None:
    h = Harness(make_set(replicas=3, retention=retention))
    for _ in range(10):
        before = h.pods()
        h.sync()
        after = h.pods()
        if len(after) > len(before):
            assert len(after) == len(before) + 1, "one creation per sync"
            assert all(is_running_and_ready(p) for p in before), "a new ordinal only after its predecessors"
        _monotonic_ok(h)
        h.step_pods()
    h.settle()
    status = h.status()
    assert (status["replicas"], status["readyReplicas"], status["updatedReplicas"]) == (3, 3, 3)
    for pod in h.pods():
        assert labels(pod)[POD_INDEX_LABEL] == name_of(pod).rsplit("-", 1)[1]


@pytest.mark.parametrize("retention", RETENTION, ids=RETENTION_IDS)
def test_parallel_creates_every_missing_pod_in_one_sync(retention: tuple[str, str] | None) -> None:
    h = Harness(make_set(replicas=3, policy="Parallel", retention=retention))
    plan = h.sync()
    assert len(plan.of_type(CreatePod)) == 3
    assert h.names() == ["foo-0", "foo-1", "foo-2"]


@pytest.mark.parametrize("policy", POLICIES)
def test_scale_up_three_to_four_reaches_four_ready(policy: str) -> None:
    h = Harness(make_set(replicas=3, policy=policy))
    h.settle()
    h.patch_set({"spec": {"replicas": 4}})
    h.settle()
    s = h.status()
    assert (s["replicas"], s["readyReplicas"], s["updatedReplicas"]) == (4, 4, 4)


def test_ordered_ready_scale_down_deletes_highest_first_one_at_a_time_after_termination() -> None:
    h = Harness(make_set(replicas=3))
    h.settle()
    h.patch_set({"spec": {"replicas": 0}})
    order = []
    for _ in range(20):
        plan = h.sync()
        deletes = plan.of_type(DeletePod)
        assert len(deletes) <= 1
        order += [d.name for d in deletes]
        if deletes:
            assert not h.sync().of_type(DeletePod), "must wait for the terminating pod"
        h.step_pods()
    assert order == ["foo-2", "foo-1", "foo-0"]
    assert h.status()["replicas"] == 0


def test_parallel_scale_down_deletes_all_condemned_pods_at_once() -> None:
    h = Harness(make_set(replicas=3, policy="Parallel"))
    h.settle()
    h.patch_set({"spec": {"replicas": 0}})
    assert sorted(d.name for d in h.sync().of_type(DeletePod)) == ["foo-0", "foo-1", "foo-2"]


@pytest.mark.parametrize("policy", POLICIES)
def test_deleted_pods_are_recreated_at_their_ordinals(policy: str) -> None:
    h = Harness(make_set(replicas=5, policy=policy))
    h.settle()
    for name in ("foo-0", "foo-2", "foo-4"):
        h.cluster.delete("Pod", "default", name, grace_period_seconds=0)
    h.settle()
    assert h.names() == [f"foo-{i}" for i in range(5)]
    assert h.status()["replicas"] == 5


@pytest.mark.parametrize("phase", ["Failed", "Succeeded"])
@pytest.mark.parametrize("policy", POLICIES)
def test_failed_or_succeeded_pod_is_deleted_then_recreated_after_it_is_gone(policy: str, phase: str) -> None:
    h = Harness(make_set(replicas=3, policy=policy))
    h.settle()
    old_uid = h.pod("foo-0")["metadata"]["uid"]
    h.set_status("foo-0", phase=phase)
    plan = h.sync()
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-0"]
    assert not h.sync().of_type(DeletePod), "a terminating failed pod is not deleted twice"
    assert not h.sync().of_type(CreatePod), "the replacement waits until the old pod is gone"
    h.finish_termination("foo-0")
    assert [c.pod["metadata"]["name"] for c in h.sync().of_type(CreatePod)] == ["foo-0"]
    assert h.pod("foo-0")["metadata"]["uid"] != old_uid


def test_pod_create_failure_reports_failed_create_then_converges() -> None:
    h = Harness(make_set(replicas=3))
    h.cluster.inject("create", "Pod", InternalError("boom"), after=2)
    h.sync(); h.step_pods(); h.sync(); h.step_pods()  # noqa: E702
    h.sync()
    assert h.last is not None and isinstance(h.last.error, InternalError)
    assert any(e.startswith("FailedCreate: create Pod foo-2 in StatefulSet foo failed error: boom") for e in h.events)
    h.settle()
    assert h.status()["readyReplicas"] == 3


def test_pods_are_named_from_the_start_ordinal() -> None:
    h = Harness(make_set(replicas=3, start=2))
    h.settle()
    assert h.names() == ["foo-2", "foo-3", "foo-4"]
    assert [labels(p)[POD_INDEX_LABEL] for p in h.pods()] == ["2", "3", "4"]


@pytest.mark.parametrize(("start", "replicas", "new_start", "expected"), [
    (0, 2, 2, ["foo-2", "foo-3"]),
    (2, 2, 4, ["foo-4", "foo-5"]),
    (3, 2, 2, ["foo-2", "foo-3"]),
    (2, 2, 0, ["foo-0", "foo-1"]),
], ids=["0-to-2", "2-to-4", "3-to-2", "remove"])
def test_changing_the_start_ordinal_moves_the_pods(start: int, replicas: int, new_start: int,
                                                   expected: list[str]) -> None:
    h = Harness(make_set(replicas=replicas, start=start))
    h.settle()
    h.patch_set({"spec": {"ordinals": {"start": new_start}}})
    h.settle()
    assert h.names() == expected


def test_terminating_condemned_pods_are_not_deleted_again_and_block_ordered_scale_down() -> None:
    h = Harness(make_set(replicas=5))
    h.settle()
    h.patch_set({"spec": {"replicas": 3}})
    for name in ("foo-3", "foo-4"):
        h.cluster.delete("Pod", "default", name)  # graceful: both terminating
    plan = h.sync()
    assert not plan.of_type(DeletePod)
    assert len(h.pods()) == 5
    h.finish_termination("foo-3"); h.finish_termination("foo-4")  # noqa: E702
    h.patch_set({"spec": {"replicas": 0}})
    h.settle()
    assert h.names() == []


def test_a_terminating_pod_blocks_ordered_scale_up_and_is_recreated_first() -> None:
    h = Harness(make_set(replicas=3))
    h.settle()
    h.patch_set({"spec": {"replicas": 5}})
    h.cluster.delete("Pod", "default", "foo-0")
    h.sync()
    assert h.names() == ["foo-0", "foo-1", "foo-2"]
    h.finish_termination("foo-0")
    created = [c.pod["metadata"]["name"] for c in h.sync().of_type(CreatePod)]
    assert created == ["foo-0"]


def test_a_set_being_deleted_creates_nothing() -> None:
    h = Harness(make_set(replicas=3))
    h.cluster.patch("StatefulSet", "default", "foo", {"metadata": {"finalizers": ["test/hold"]}})
    h.cluster.delete("StatefulSet", "default", "foo")
    assert is_terminating(h.sts)
    plan = h.sync()
    assert not plan.of_type(CreatePod)
    assert h.names() == []


def test_unhealthy_pod_halts_ordered_scaling_but_not_parallel() -> None:
    ordered = Harness(make_set(replicas=1))
    ordered.settle()
    ordered.set_status("foo-0", phase="Running", ready=False)
    ordered.patch_set({"spec": {"replicas": 3}})
    ordered.sync()
    assert ordered.names() == ["foo-0"]
    parallel = Harness(make_set(replicas=1, policy="Parallel"))
    parallel.settle()
    parallel.set_status("foo-0", phase="Running", ready=False)
    parallel.patch_set({"spec": {"replicas": 3}})
    parallel.sync()
    assert parallel.names() == ["foo-0", "foo-1", "foo-2"]
