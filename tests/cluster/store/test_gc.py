"""Owner-reference garbage collection in the memory store (reference §6.2, §6.3): cascades, multiple owners, stale
owner uids, Background / Foreground / Orphan propagation, and determinism."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_set

from rollwise.api.errors import InternalError, NotFound
from rollwise.api.identity import new_pod
from rollwise.api.meta import Obj, owner_reference
from rollwise.cluster.store.gc import FOREGROUND_FINALIZER, GC_ACTOR, ORPHAN_FINALIZER
from rollwise.cluster.store.memory import MemoryCluster


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def ref(owner: Obj, *, controller: bool = True, block: bool = True) -> Obj:
    return {"apiVersion": "v1", "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": controller, "blockOwnerDeletion": block}


def stale_ref(kind: str, name: str) -> Obj:
    return {"apiVersion": "v1", "kind": kind, "name": name, "uid": "uid-of-an-earlier-incarnation",
            "controller": True, "blockOwnerDeletion": True}


def obj(kind: str, name: str, *owners: Obj, **meta: Any) -> Obj:
    metadata: dict[str, Any] = {"name": name, **meta}
    if owners:
        metadata["ownerReferences"] = list(owners)
    return {"kind": kind, "metadata": metadata, "spec": {}}


def exists(cluster: MemoryCluster, kind: str, name: str) -> bool:
    try:
        cluster.get(kind, "default", name)
    except NotFound:
        return False
    return True


def terminating(cluster: MemoryCluster, kind: str, name: str) -> bool:
    return cluster.get(kind, "default", name)["metadata"].get("deletionTimestamp") is not None


@pytest.fixture
def cluster() -> MemoryCluster:
    return MemoryCluster(clock=Clock(5.0))


@pytest.fixture
def chain(cluster: MemoryCluster) -> tuple[Obj, Obj, Obj]:
    """A set owning a pod owning its claim (whenScaled: Delete)."""
    sts = cluster.create(obj("StatefulSet", "web"))
    pod = cluster.create(obj("Pod", "web-0", ref(sts)), actor="statefulset-controller")
    claim = cluster.create(obj("PersistentVolumeClaim", "data-web-0", ref(pod)), actor="statefulset-controller")
    return sts, pod, claim


def test_deleting_the_set_cascades_to_pod_then_to_its_claim_once_the_pod_is_gone(
    cluster: MemoryCluster, chain: tuple[Obj, Obj, Obj]
) -> None:
    cursor = cluster.cursor
    assert cluster.delete("StatefulSet", "default", "web") is None
    # reference §6.2: the pod terminates gracefully; its claim stays while the pod object exists
    assert terminating(cluster, "Pod", "web-0")
    assert exists(cluster, "PersistentVolumeClaim", "data-web-0")
    cluster.delete("Pod", "default", "web-0", grace_period_seconds=0, actor="kubelet")
    assert len(cluster) == 0
    changes = cluster.changes_since(cursor)[0]
    assert [(c.type, c.kind, c.actor) for c in changes] == [
        ("DELETED", "StatefulSet", "user"),
        ("MODIFIED", "Pod", GC_ACTOR),
        ("DELETED", "Pod", "kubelet"),
        ("DELETED", "PersistentVolumeClaim", GC_ACTOR),
    ]
    assert cluster.write_count(GC_ACTOR) == 2


def test_objects_without_owner_references_are_never_collected(cluster: MemoryCluster) -> None:
    owner = cluster.create(obj("StatefulSet", "web"))
    cluster.create(obj("Pod", "loner"))
    cluster.create(obj("PersistentVolumeClaim", "data"))
    cluster.create(obj("Pod", "owned", ref(owner)))
    cluster.delete("StatefulSet", "default", "web")
    assert not terminating(cluster, "Pod", "loner")
    assert exists(cluster, "PersistentVolumeClaim", "data")
    assert terminating(cluster, "Pod", "owned")


@pytest.mark.parametrize(
    ("deleted", "remaining_owner_names"),
    [([], ["a", "b"]), (["a"], ["b"]), (["b"], ["a"]), (["a", "b"], None)],
    ids=["both-owners-live", "first-owner-gone", "second-owner-gone", "all-owners-gone"],
)
def test_an_object_stays_while_any_owner_lives_and_loses_references_to_gone_owners(
    cluster: MemoryCluster, deleted: list[str], remaining_owner_names: list[str] | None
) -> None:
    a = cluster.create(obj("ConfigMap", "a"))
    b = cluster.create(obj("ConfigMap", "b"))
    cluster.create(obj("PersistentVolumeClaim", "data", ref(a), ref(b, controller=False)))
    for name in deleted:
        cluster.delete("ConfigMap", "default", name)
    if remaining_owner_names is None:
        assert not exists(cluster, "PersistentVolumeClaim", "data")
        return
    refs = cluster.get("PersistentVolumeClaim", "default", "data")["metadata"]["ownerReferences"]
    assert [r["name"] for r in refs] == remaining_owner_names


@pytest.mark.parametrize(
    ("kind", "outcome"),
    [("PersistentVolumeClaim", "removed"), ("Pod", "terminating")],
    ids=["claim-removed-at-once", "pod-terminates-gracefully"],
)
def test_object_created_with_only_a_stale_owner_uid_is_collected_at_once(
    cluster: MemoryCluster, kind: str, outcome: str
) -> None:
    # reference §6.3: a claim still pointing at an earlier incarnation of its pod is garbage
    created = cluster.create(obj(kind, "data-web-0", stale_ref("Pod", "web-0")), actor="statefulset-controller")
    assert created["metadata"]["uid"]
    if outcome == "removed":
        assert not exists(cluster, kind, "data-web-0")
    else:
        assert terminating(cluster, kind, "data-web-0")
    assert cluster.changes_since(0)[0][-1].actor == GC_ACTOR


def test_a_stale_reference_beside_a_live_owner_is_removed_and_the_object_kept(cluster: MemoryCluster) -> None:
    sts = cluster.create(obj("StatefulSet", "web"))
    cluster.create(obj("PersistentVolumeClaim", "data-web-0", stale_ref("Pod", "web-0"), ref(sts)))
    refs = cluster.get("PersistentVolumeClaim", "default", "data-web-0")["metadata"]["ownerReferences"]
    assert [r["kind"] for r in refs] == ["StatefulSet"]


@pytest.mark.parametrize(
    "write",
    [
        lambda c, r: c.update({**c.get("PersistentVolumeClaim", "default", "data"),
                               "metadata": {"name": "data", "ownerReferences": [r]}}),
        lambda c, r: c.patch("PersistentVolumeClaim", "default", "data", {"metadata": {"ownerReferences": [r]}}),
    ],
    ids=["update", "patch"],
)
def test_pointing_an_existing_object_at_a_missing_owner_collects_it(cluster: MemoryCluster, write: Any) -> None:
    cluster.create(obj("PersistentVolumeClaim", "data"))
    write(cluster, stale_ref("Pod", "web-0"))
    assert len(cluster) == 0


def test_orphan_propagation_strips_references_instead_of_collecting(
    cluster: MemoryCluster, chain: tuple[Obj, Obj, Obj]
) -> None:
    sts, pod, _ = chain
    other = cluster.create(obj("ConfigMap", "other"))
    refs = [ref(sts), ref(other, controller=False)]
    cluster.patch("Pod", "default", "web-0", {"metadata": {"ownerReferences": refs}})
    assert cluster.delete("StatefulSet", "default", "web", propagation="Orphan") is None
    kept = cluster.get("Pod", "default", "web-0")
    assert kept["metadata"].get("deletionTimestamp") is None
    assert [r["name"] for r in kept["metadata"]["ownerReferences"]] == ["other"]
    # the pod's own dependents are untouched
    claim = cluster.get("PersistentVolumeClaim", "default", "data-web-0")
    assert claim["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]


def test_orphaned_dependent_keeps_living_after_the_last_owner_reference_is_stripped(
    cluster: MemoryCluster, chain: tuple[Obj, Obj, Obj]
) -> None:
    cluster.delete("StatefulSet", "default", "web", propagation="Orphan")
    pod = cluster.get("Pod", "default", "web-0")
    assert "ownerReferences" not in pod["metadata"]
    cluster.create(obj("StatefulSet", "web"))
    assert exists(cluster, "Pod", "web-0")


def test_foreground_deletion_keeps_the_owner_until_blocking_dependents_are_gone(
    cluster: MemoryCluster, chain: tuple[Obj, Obj, Obj]
) -> None:
    cluster.create(obj("ConfigMap", "non-blocking", ref(chain[0], block=False)))
    held = cluster.delete("StatefulSet", "default", "web", propagation="Foreground")
    assert held is not None
    assert held["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]
    assert not exists(cluster, "ConfigMap", "non-blocking")
    # the pod is deleted in the foreground too, so its claim goes first; the pod still terminates gracefully
    assert not exists(cluster, "PersistentVolumeClaim", "data-web-0")
    assert terminating(cluster, "Pod", "web-0")
    assert "finalizers" not in cluster.get("Pod", "default", "web-0")["metadata"]
    assert cluster.get("StatefulSet", "default", "web") is held  # the terminating pod still blocks
    cluster.delete("Pod", "default", "web-0", grace_period_seconds=0, actor="kubelet")
    assert len(cluster) == 0


def test_foreground_deletion_without_dependents_removes_at_once(cluster: MemoryCluster) -> None:
    cluster.create(obj("StatefulSet", "web"))
    assert cluster.delete("StatefulSet", "default", "web", propagation="Foreground") is None
    assert len(cluster) == 0


def test_foreground_owner_releases_when_a_dependent_with_another_live_owner_drops_its_reference(
    cluster: MemoryCluster,
) -> None:
    a = cluster.create(obj("ConfigMap", "a"))
    b = cluster.create(obj("ConfigMap", "b"))
    cluster.create(obj("PersistentVolumeClaim", "shared", ref(a), ref(b, controller=False)))
    assert cluster.delete("ConfigMap", "default", "a", propagation="Foreground") is None
    refs = cluster.get("PersistentVolumeClaim", "default", "shared")["metadata"]["ownerReferences"]
    assert [r["name"] for r in refs] == ["b"]


def test_finalizer_on_a_dependent_holds_it_until_removed(cluster: MemoryCluster) -> None:
    owner = cluster.create(obj("ConfigMap", "owner"))
    cluster.create(obj("PersistentVolumeClaim", "data", ref(owner), finalizers=["kubernetes.io/pvc-protection"]))
    cluster.delete("ConfigMap", "default", "owner")
    assert terminating(cluster, "PersistentVolumeClaim", "data")
    cluster.patch("PersistentVolumeClaim", "default", "data", {"metadata": {"finalizers": None}})
    assert len(cluster) == 0


def test_terminated_pods_are_collected_without_waiting(cluster: MemoryCluster) -> None:
    sts = cluster.create(obj("StatefulSet", "web"))
    failed = obj("Pod", "web-0", ref(sts))
    failed["status"] = {"phase": "Failed"}
    cluster.create(failed)
    cluster.delete("StatefulSet", "default", "web")
    assert len(cluster) == 0


def test_collector_writes_ignore_injected_faults(cluster: MemoryCluster, chain: tuple[Obj, Obj, Obj]) -> None:
    cluster.inject("delete", "Pod", InternalError("api down"))
    cluster.delete("StatefulSet", "default", "web")
    assert terminating(cluster, "Pod", "web-0")
    with pytest.raises(InternalError):
        cluster.delete("Pod", "default", "web-0", grace_period_seconds=0)


def test_long_ownership_chains_cascade_without_recursion(cluster: MemoryCluster) -> None:
    prev = cluster.create(obj("ConfigMap", "c-0000"))
    for i in range(1, 3000):
        prev = cluster.create(obj("ConfigMap", f"c-{i:04d}", ref(prev)))
    cluster.delete("ConfigMap", "default", "c-0000")
    assert len(cluster) == 0


def test_collection_order_is_deterministic_in_order_of_ownership(cluster: MemoryCluster) -> None:
    owner = cluster.create(obj("ConfigMap", "owner"))
    names = ["z", "b", "m", "a", "q"]
    for name in names:
        cluster.create(obj("PersistentVolumeClaim", name, ref(owner)))
    cursor = cluster.cursor
    cluster.delete("ConfigMap", "default", "owner")
    assert [c.name for c in cluster.changes_since(cursor)[0]][1:] == names


def test_a_recreated_owner_with_the_same_name_does_not_adopt_old_dependents(cluster: MemoryCluster) -> None:
    sts = cluster.create(obj("StatefulSet", "web"))
    cluster.create(obj("PersistentVolumeClaim", "data-web-0", ref(sts)))
    cluster.delete("StatefulSet", "default", "web", propagation="Orphan")
    cluster.create(obj("StatefulSet", "web"))
    cluster.create(obj("PersistentVolumeClaim", "data-web-1", ref(sts)))  # uid of the first incarnation
    assert exists(cluster, "PersistentVolumeClaim", "data-web-0")
    assert not exists(cluster, "PersistentVolumeClaim", "data-web-1")


def test_a_terminating_dependent_is_left_to_finish_without_collector_writes(cluster: MemoryCluster) -> None:
    a = cluster.create(obj("ConfigMap", "a"))
    b = cluster.create(obj("ConfigMap", "b"))
    pod = cluster.create(obj("Pod", "web-0", ref(a), ref(b, controller=False)))
    cluster.update_status({**pod, "status": {"phase": "Running"}})
    cluster.delete("Pod", "default", "web-0")
    cluster.patch("Pod", "default", "web-0", {"status": {"phase": "Failed"}}, actor="kubelet")
    cluster.delete("ConfigMap", "default", "b")
    cluster.delete("ConfigMap", "default", "a")
    assert cluster.write_count(GC_ACTOR) == 0
    assert len(cluster.get("Pod", "default", "web-0")["metadata"]["ownerReferences"]) == 2



def test_pods_of_a_set_share_one_owner_list_and_releasing_one_pod_keeps_the_others_owned(
        cluster: MemoryCluster) -> None:
    sts = cluster.create(make_set("web", claims=False), actor="user")
    pods = [cluster.create(new_pod(sts, sts["spec"]["template"], i, "rev-1"), actor="statefulset-controller",
                           handed_over=True) for i in range(3)]
    refs = pods[0]["metadata"]["ownerReferences"]
    assert all(p["metadata"]["ownerReferences"] is refs for p in pods)  # one list for the set's pods

    released = cluster.get("Pod", "default", "web-1")
    cluster.update({**released, "metadata": {k: v for k, v in released["metadata"].items()
                                             if k != "ownerReferences"}})
    assert "ownerReferences" not in cluster.get("Pod", "default", "web-1")["metadata"]
    assert [cluster.get("Pod", "default", n)["metadata"]["ownerReferences"] for n in ("web-0", "web-2")] == [
        [owner_reference(sts)]] * 2
    cluster.delete("StatefulSet", "default", "web")
    assert [exists(cluster, "Pod", n) and not terminating(cluster, "Pod", n) for n in ("web-0", "web-1", "web-2")] == [
        False, True, False]


def test_an_orphan_delete_goes_through_the_orphan_finalizer_and_a_deletion_timestamp_window(
    cluster: MemoryCluster, chain: tuple[Obj, Obj, Obj]
) -> None:
    """As kube-apiserver and the garbage collector: the owner is terminating with the ``orphan`` finalizer while its
    dependents still name it; the orphaning step strips them, then the finalizer, then the owner is gone."""
    steps: list[Any] = []
    cluster.orphan_later = steps.append
    held = cluster.delete("StatefulSet", "default", "web", propagation="Orphan")
    assert held is not None and held["metadata"]["deletionTimestamp"] == 5.0
    assert held["metadata"]["finalizers"] == [ORPHAN_FINALIZER]
    assert cluster.get("Pod", "default", "web-0")["metadata"]["ownerReferences"][0]["name"] == "web"
    (step,) = steps
    step()
    assert "ownerReferences" not in cluster.get("Pod", "default", "web-0")["metadata"]
    assert not exists(cluster, "StatefulSet", "web")
    assert exists(cluster, "Pod", "web-0")


def test_a_pod_adopted_by_an_owner_in_its_orphan_window_is_released_not_collected(
    cluster: MemoryCluster, chain: tuple[Obj, Obj, Obj]
) -> None:
    sts, _, _ = chain
    steps: list[Any] = []
    cluster.orphan_later = steps.append
    cluster.create(obj("Pod", "web-1"))
    cluster.delete("StatefulSet", "default", "web", propagation="Orphan")
    cluster.patch("Pod", "default", "web-1", {"metadata": {"ownerReferences": [ref(sts)]}})
    steps[0]()
    assert exists(cluster, "Pod", "web-1") and exists(cluster, "Pod", "web-0")


def test_an_orphan_delete_left_half_done_is_finished_when_the_store_resumes(
    cluster: MemoryCluster, chain: tuple[Obj, Obj, Obj]
) -> None:
    """``up`` stopped (killed) between the delete and the collector's step, then started on the same data."""
    cluster.orphan_later = lambda step: None
    cluster.delete("StatefulSet", "default", "web", propagation="Orphan")
    cluster.orphan_later = None
    cluster.resume_orphaning()
    assert not exists(cluster, "StatefulSet", "web")
    assert "ownerReferences" not in cluster.get("Pod", "default", "web-0")["metadata"]
