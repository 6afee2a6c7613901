"""MemoryCluster: object lifecycle, optimistic concurrency, status subresource, merge patch, graceful deletion and
finalizers, reads that stay unchanged. The change feed, write counts and faults are in test_memory_feed.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rollwise.api.errors import AlreadyExists, Conflict, Invalid, NotFound
from rollwise.api.meta import Obj
from rollwise.api.values import clone
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.cluster.store.patching import clone_sharing, merge_patch


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def obj(kind: str, name: str, *, namespace: str | None = None, **fields: Any) -> Obj:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update(fields.pop("metadata", {}))
    return {"apiVersion": "v1", "kind": kind, "metadata": meta, **fields}


def pod(name: str, **fields: Any) -> Obj:
    return obj("Pod", name, **fields)


@pytest.fixture
def clock() -> Clock:
    return Clock(10.0)


@pytest.fixture
def cluster(clock: Clock) -> MemoryCluster:
    return MemoryCluster(clock=clock)


# -- create, get, list -------------------------------------------------------------------------------------------


def test_create_sets_deterministic_uid_resource_version_generation_and_creation_time(cluster: MemoryCluster) -> None:
    a = cluster.create(obj("ConfigMap", "a"))
    b = cluster.create(obj("Lease", "b", namespace="kube-system"))
    assert [a["metadata"]["uid"], b["metadata"]["uid"]] == ["uid-1", "uid-2"]
    assert [a["metadata"]["resourceVersion"], b["metadata"]["resourceVersion"]] == ["1", "2"]
    assert a["metadata"]["generation"] == 1
    assert a["metadata"]["creationTimestamp"] == 10.0
    assert a["metadata"]["namespace"] == "default"
    assert cluster.get("Lease", "kube-system", "b") is b


def test_create_ignores_server_fields_given_by_the_caller(cluster: MemoryCluster) -> None:
    given = obj("ConfigMap", "a", metadata={"uid": "mine", "resourceVersion": "99", "generation": 7,
                                            "creationTimestamp": 1.0, "deletionTimestamp": 2.0})
    meta = cluster.create(given)["metadata"]
    assert (meta["uid"], meta["resourceVersion"], meta["generation"], meta["creationTimestamp"]) == (
        "uid-1", "1", 1, 10.0)
    assert "deletionTimestamp" not in meta


@pytest.mark.parametrize(
    ("status", "phase"),
    [(None, "Pending"), ({}, "Pending"), ({"phase": "Running"}, "Running"), ({"podIP": "10.0.0.1"}, "Pending")],
    ids=["no-status", "empty-status", "phase-kept", "other-status-fields-kept"],
)
def test_created_pod_gets_pending_phase_only_when_it_has_none(
    cluster: MemoryCluster, status: dict[str, Any] | None, phase: str
) -> None:
    body = pod("web-0") if status is None else pod("web-0", status=status)
    created = cluster.create(body)
    assert created["status"]["phase"] == phase
    assert {k: v for k, v in created["status"].items() if k != "phase"} == {
        k: v for k, v in (status or {}).items() if k != "phase"}


def test_create_of_an_existing_key_raises_already_exists_even_while_terminating(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0"))
    cluster.delete("Pod", "default", "web-0")
    with pytest.raises(AlreadyExists):
        cluster.create(pod("web-0"))


def test_same_name_in_another_namespace_or_kind_is_another_object(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0"))
    cluster.create(pod("web-0", namespace="other"))
    cluster.create(obj("Lease", "web-0"))
    assert len(cluster) == 3


def test_generate_name_gives_a_fresh_name_and_a_missing_name_is_invalid(cluster: MemoryCluster) -> None:
    first = cluster.create(obj("Event", "", metadata={"generateName": "web."}))
    second = cluster.create(obj("Event", "", metadata={"generateName": "web."}))
    assert first["metadata"]["name"] != second["metadata"]["name"]
    assert first["metadata"]["name"].startswith("web.")
    with pytest.raises(Invalid):
        cluster.create({"kind": "Pod", "metadata": {}})
    with pytest.raises(Invalid):
        cluster.create({"metadata": {"name": "no-kind"}})


def test_get_of_a_missing_object_raises_not_found(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0"))
    for kind, ns, name in [("Pod", "default", "web-1"), ("Pod", "other", "web-0"), ("Lease", "default", "web-0")]:
        with pytest.raises(NotFound):
            cluster.get(kind, ns, name)


@pytest.mark.parametrize(
    ("namespace", "selector", "expected"),
    [
        (None, None, ["a/web-0", "a/web-1", "b/db-0", "default/web-2"]),
        ("a", None, ["a/web-0", "a/web-1"]),
        ("missing", None, []),
        (None, {"matchLabels": {"app": "web"}}, ["a/web-0", "a/web-1", "default/web-2"]),
        ("a", {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]}, ["a/web-1"]),
        (None, {}, []),
    ],
    ids=["all-namespaces", "one-namespace", "unknown-namespace", "match-labels", "match-expressions",
         "empty-selector-matches-nothing"],
)
def test_list_filters_by_namespace_and_selector_and_sorts_by_namespace_then_name(
    cluster: MemoryCluster, namespace: str | None, selector: dict[str, Any] | None, expected: list[str]
) -> None:
    cluster.create(pod("web-1", namespace="a", metadata={"labels": {"app": "web", "tier": "front"}}))
    cluster.create(pod("web-2", metadata={"labels": {"app": "web"}}))
    cluster.create(pod("db-0", namespace="b", metadata={"labels": {"app": "db"}}))
    cluster.create(pod("web-0", namespace="a", metadata={"labels": {"app": "web"}}))
    cluster.create(obj("Lease", "web-0", namespace="a", metadata={"labels": {"app": "web"}}))
    got = cluster.list("Pod", namespace, selector=selector)
    assert [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in got] == expected


def test_list_order_follows_creations_and_removals(cluster: MemoryCluster) -> None:
    for name in ("c", "a", "b"):
        cluster.create(obj("Lease", name))
    assert [o["metadata"]["name"] for o in cluster.list("Lease")] == ["a", "b", "c"]
    cluster.delete("Lease", "default", "a")
    cluster.create(obj("Lease", "aa"))
    assert [o["metadata"]["name"] for o in cluster.list("Lease", "default")] == ["aa", "b", "c"]
    assert cluster.list("Pod") == []


# -- update: conflicts, server-owned fields, generation ------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "generation", "bump"),
    [
        (lambda o: o["spec"].update(replicas=5), 2, 1),
        (lambda o: o["metadata"].setdefault("labels", {}).update(x="y"), 1, 1),
        (lambda o: None, 1, 0),
    ],
    ids=["spec-change-bumps", "metadata-change-keeps", "no-change-keeps"],
)
def test_update_bumps_generation_only_when_spec_changed_and_resource_version_only_when_anything_did(
    cluster: MemoryCluster, change: Any, generation: int, bump: int
) -> None:
    # An update that changes nothing is no write (kube-apiserver's GuaranteedUpdate; test_memory_noop.py): this
    # test once pinned a bump on every update, which kube-apiserver never makes.
    stored = cluster.create(obj("StatefulSet", "web", spec={"replicas": 3}))
    body = copy.deepcopy(stored)
    change(body)
    updated = cluster.update(body)
    assert updated["metadata"]["generation"] == generation
    assert int(updated["metadata"]["resourceVersion"]) == int(stored["metadata"]["resourceVersion"]) + bump


def test_update_with_stale_resource_version_raises_conflict_and_leaves_the_object_unchanged(
    cluster: MemoryCluster,
) -> None:
    first = cluster.create(obj("StatefulSet", "web", spec={"replicas": 3}))
    stale = copy.deepcopy(first)
    second = cluster.update({**copy.deepcopy(first), "spec": {"replicas": 4}})
    stale["spec"]["replicas"] = 9
    cursor = cluster.cursor
    with pytest.raises(Conflict):
        cluster.update(stale)
    assert cluster.get("StatefulSet", "default", "web") is second
    assert cluster.changes_since(cursor)[0] == []


@pytest.mark.parametrize(
    ("precondition", "outcome"),
    [({"resourceVersion": "1"}, "ok"), ({"resourceVersion": ""}, "ok"), ({}, "ok"),
     ({"resourceVersion": "0"}, "conflict"), ({"uid": "uid-1"}, "ok"), ({"uid": "uid-77"}, "conflict")],
    ids=["current-rv", "empty-rv-is-unconditional", "no-rv-is-unconditional", "stale-rv", "same-uid",
         "other-uid"],
)
def test_update_preconditions(cluster: MemoryCluster, precondition: dict[str, str], outcome: str) -> None:
    cluster.create(obj("Lease", "l", spec={"holderIdentity": "a"}))
    body = obj("Lease", "l", metadata=precondition, spec={"holderIdentity": "b"})
    if outcome == "conflict":
        with pytest.raises(Conflict):
            cluster.update(body)
        assert cluster.get("Lease", "default", "l")["spec"] == {"holderIdentity": "a"}
    else:
        assert cluster.update(body)["spec"] == {"holderIdentity": "b"}


def test_update_keeps_server_owned_fields(cluster: MemoryCluster, clock: Clock) -> None:
    stored = cluster.create(obj("Lease", "l"))
    clock.now = 50.0
    body = obj("Lease", "l", metadata={"uid": "", "creationTimestamp": 99.0, "deletionTimestamp": 1.0})
    meta = cluster.update(body)["metadata"]
    assert (meta["uid"], meta["creationTimestamp"]) == (stored["metadata"]["uid"], 10.0)
    assert "deletionTimestamp" not in meta


def test_update_of_a_missing_object_raises_not_found(cluster: MemoryCluster) -> None:
    with pytest.raises(NotFound):
        cluster.update(pod("ghost"))
    with pytest.raises(NotFound):
        cluster.update_status(pod("ghost", status={"phase": "Running"}))
    with pytest.raises(NotFound):
        cluster.patch("Pod", "default", "ghost", {"metadata": {"labels": {"a": "b"}}})


# -- status subresource ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "status_kept"),
    [("StatefulSet", True), ("Pod", True), ("PersistentVolumeClaim", True), ("ControllerRevision", False),
     ("Lease", False)],
    ids=["StatefulSet", "Pod", "PersistentVolumeClaim", "ControllerRevision", "Lease"],
)
def test_update_keeps_stored_status_only_for_kinds_with_a_status_subresource(
    cluster: MemoryCluster, kind: str, status_kept: bool
) -> None:
    cluster.create(obj(kind, "x", spec={"a": 1}, status={"phase": "Old"}))
    updated = cluster.update(obj(kind, "x", spec={"a": 2}, status={"phase": "New"}))
    assert updated["spec"] == {"a": 2}
    assert updated["status"]["phase"] == ("Old" if status_kept else "New")


def test_update_status_changes_only_status_and_never_generation(cluster: MemoryCluster) -> None:
    stored = cluster.create(obj("StatefulSet", "web", spec={"replicas": 3}, metadata={"labels": {"a": "1"}}))
    body = copy.deepcopy(stored)
    body["spec"]["replicas"] = 7
    body["metadata"]["labels"] = {"a": "2"}
    body["status"] = {"replicas": 3, "observedGeneration": 1}
    updated = cluster.update_status(body)
    assert updated["status"] == {"replicas": 3, "observedGeneration": 1}
    assert updated["spec"] == {"replicas": 3}
    assert updated["metadata"]["labels"] == {"a": "1"}
    assert updated["metadata"]["generation"] == 1


def test_update_status_with_stale_resource_version_raises_conflict_and_leaves_the_object_unchanged(
    cluster: MemoryCluster,
) -> None:
    stored = cluster.create(obj("StatefulSet", "web", spec={"replicas": 3}))
    current = cluster.update_status({**stored, "status": {"replicas": 1}})
    with pytest.raises(Conflict):
        cluster.update_status({**stored, "status": {"replicas": 2}})
    assert cluster.get("StatefulSet", "default", "web") is current


# -- admission ---------------------------------------------------------------------------------------------------


def _admit_defaults_replicas(new: Obj, old: Obj | None) -> Obj:
    if new["spec"].get("replicas", 1) < 0:
        raise Invalid("spec.replicas: Invalid value: must be greater than or equal to 0")
    new["spec"].setdefault("replicas", 1)
    new["spec"]["seenOld"] = old is not None
    return new


def test_admission_defaults_on_create_update_and_patch_and_sees_the_stored_object(clock: Clock) -> None:
    cluster = MemoryCluster(clock=clock, admit={"StatefulSet": _admit_defaults_replicas})
    created = cluster.create(obj("StatefulSet", "web", spec={}))
    assert created["spec"] == {"replicas": 1, "seenOld": False}
    updated = cluster.update(obj("StatefulSet", "web", spec={"replicas": 2}))
    assert updated["spec"] == {"replicas": 2, "seenOld": True}
    patched = cluster.patch("StatefulSet", "default", "web", {"spec": {"replicas": None}})
    assert patched["spec"] == {"replicas": 1, "seenOld": True}
    assert created["spec"] == {"replicas": 1, "seenOld": False}  # the hook got a private copy each time


def test_an_admission_hook_that_changes_its_input_in_place_never_changes_stored_objects(clock: Clock) -> None:
    def scribble(new: Obj, old: Obj | None) -> Obj:
        new["spec"]["template"]["seen"] = new["spec"]["template"].get("seen", 0) + 1
        status = new.setdefault("status", {})
        status["scribbled"] = status.get("scribbled", 0) + 1
        return new

    cluster = MemoryCluster(clock=clock, admit={"StatefulSet": scribble})
    first = cluster.create(obj("StatefulSet", "web", spec={"template": {}}, status={"replicas": 0}))
    before = copy.deepcopy(first)
    second = cluster.patch("StatefulSet", "default", "web", {"metadata": {"labels": {"a": "b"}}})
    before_second = copy.deepcopy(second)
    cluster.update(obj("StatefulSet", "web", spec={"template": {}}))
    assert (first, second) == (before, before_second)
    assert cluster.get("StatefulSet", "default", "web")["spec"]["template"] == {"seen": 1}


def test_defaulting_alone_does_not_bump_generation(clock: Clock) -> None:
    def default_replicas(new: Obj, old: Obj | None) -> Obj:
        return {**new, "spec": {"replicas": 1, **new["spec"]}}

    cluster = MemoryCluster(clock=clock, admit={"StatefulSet": default_replicas})
    cluster.create(obj("StatefulSet", "web", spec={}))
    assert cluster.update(obj("StatefulSet", "web", spec={}))["metadata"]["generation"] == 1
    assert cluster.update(obj("StatefulSet", "web", spec={"replicas": 2}))["metadata"]["generation"] == 2


def test_admission_refusal_stores_nothing(clock: Clock) -> None:
    cluster = MemoryCluster(clock=clock, admit={"StatefulSet": _admit_defaults_replicas})
    with pytest.raises(Invalid):
        cluster.create(obj("StatefulSet", "web", spec={"replicas": -1}))
    assert len(cluster) == 0
    stored = cluster.create(obj("StatefulSet", "web", spec={"replicas": 3}))
    with pytest.raises(Invalid):
        cluster.patch("StatefulSet", "default", "web", {"spec": {"replicas": -1}})
    assert cluster.get("StatefulSet", "default", "web") is stored
    assert cluster.write_count() == 1
    assert stored["metadata"]["uid"] == "uid-1"  # no uid was spent on the refused create


# -- merge patch -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": 3}}, {"a": {"b": 3, "c": 2}}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"b": None}}, {"a": {"c": 2}}),
        ({"a": [1, 2, 3]}, {"a": [4]}, {"a": [4]}),
        ({"a": [{"n": "x", "v": 1}]}, {"a": [{"n": "x"}]}, {"a": [{"n": "x"}]}),
        ({"a": 1}, {"a": {"b": {"c": None, "d": 1}}}, {"a": {"b": {"d": 1}}}),
        ({"a": 1}, {"missing": None}, {"a": 1}),
        ({"a": {"b": 1}}, {"a": "scalar"}, {"a": "scalar"}),
    ],
    ids=["nested-merge", "null-deletes", "lists-replace", "list-of-objects-replaces", "nulls-in-new-objects-dropped",
         "deleting-a-missing-key", "scalar-replaces-object"],
)
def test_merge_patch_follows_rfc_7386(target: Obj, patch: Obj, expected: Obj) -> None:
    before = copy.deepcopy(target)
    assert merge_patch(target, patch) == expected
    assert target == before


def test_patch_applies_to_metadata_spec_and_status_and_bumps_generation_only_for_spec(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0", metadata={"labels": {"a": "1", "b": "2"}}, spec={"containers": [{"name": "app"}]}))
    labelled = cluster.patch("Pod", "default", "web-0", {"metadata": {"labels": {"b": None, "c": "3"}},
                                                         "status": {"phase": "Running"}})
    assert labelled["metadata"]["labels"] == {"a": "1", "c": "3"}
    assert labelled["status"]["phase"] == "Running"
    assert labelled["metadata"]["generation"] == 1
    image = cluster.patch("Pod", "default", "web-0", {"spec": {"containers": [{"name": "app", "image": "v2"}]}})
    assert image["spec"]["containers"] == [{"name": "app", "image": "v2"}]
    assert image["metadata"]["generation"] == 2


@pytest.mark.parametrize(
    ("meta", "error"),
    [({"resourceVersion": "1"}, Conflict), ({"uid": "uid-9"}, Conflict), ({"name": "other"}, Invalid),
     ({"namespace": "other"}, Invalid)],
    ids=["stale-resource-version", "uid-of-another-incarnation", "rename", "move-namespace"],
)
def test_patch_preconditions_and_identity_leave_the_object_unchanged(
    cluster: MemoryCluster, meta: dict[str, str], error: type[Exception]
) -> None:
    cluster.create(pod("web-0"))
    current = cluster.patch("Pod", "default", "web-0", {"metadata": {"labels": {"a": "1"}}})
    with pytest.raises(error):
        cluster.patch("Pod", "default", "web-0", {"metadata": {**meta, "labels": {"a": "2"}}})
    assert cluster.get("Pod", "default", "web-0") is current


def test_patch_keeps_server_owned_fields(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0"))
    patched = cluster.patch("Pod", "default", "web-0", {"metadata": {"uid": None, "creationTimestamp": 1.0}})
    assert (patched["metadata"]["uid"], patched["metadata"]["creationTimestamp"]) == ("uid-1", 10.0)


# -- deletion, grace periods, finalizers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "grace_arg", "grace"),
    [({}, None, 30), ({"terminationGracePeriodSeconds": 5}, None, 5), ({"terminationGracePeriodSeconds": 5}, 12, 12)],
    ids=["default-30", "from-pod-spec", "from-delete-call"],
)
def test_pod_deletion_is_graceful(
    cluster: MemoryCluster, clock: Clock, spec: dict[str, Any], grace_arg: float | None, grace: float
) -> None:
    cluster.create(pod("web-0", spec=spec))
    clock.now = 20.0
    terminating = cluster.delete("Pod", "default", "web-0", grace_period_seconds=grace_arg)
    assert terminating is not None
    assert terminating["metadata"]["deletionTimestamp"] == 20.0
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == grace
    assert cluster.get("Pod", "default", "web-0") is terminating


@pytest.mark.parametrize(
    ("second_grace", "writes"),
    [(None, 0), (30, 0), (60, 0), (10, 1)],
    ids=["default-again", "same", "longer", "shorter"],
)
def test_repeated_pod_delete_only_writes_when_it_shortens_the_grace_period(
    cluster: MemoryCluster, clock: Clock, second_grace: float | None, writes: int
) -> None:
    cluster.create(pod("web-0"))
    first = cluster.delete("Pod", "default", "web-0")
    cursor, before = cluster.cursor, cluster.write_count()
    clock.now = 15.0
    second = cluster.delete("Pod", "default", "web-0", grace_period_seconds=second_grace, actor="other")
    assert second is not None
    assert cluster.write_count() - before == writes
    assert len(cluster.changes_since(cursor)[0]) == writes
    assert second["metadata"]["deletionTimestamp"] == first["metadata"]["deletionTimestamp"] == 10.0
    assert second["metadata"]["deletionGracePeriodSeconds"] == (10 if writes else 30)


def test_grace_zero_removes_a_pod_at_once_and_the_last_state_is_not_terminating(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0"))
    cursor = cluster.cursor
    assert cluster.delete("Pod", "default", "web-0", grace_period_seconds=0) is None
    with pytest.raises(NotFound):
        cluster.get("Pod", "default", "web-0")
    [change] = cluster.changes_since(cursor)[0]
    assert change.type == "DELETED"
    assert "deletionTimestamp" not in change.obj["metadata"]


def test_kubelet_grace_zero_delete_removes_a_terminating_pod(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0"))
    cluster.delete("Pod", "default", "web-0")
    assert cluster.delete("Pod", "default", "web-0", grace_period_seconds=0, actor="kubelet") is None
    assert len(cluster) == 0


@pytest.mark.parametrize("phase", ["Failed", "Succeeded"], ids=["Failed", "Succeeded"])
def test_terminated_pod_is_removed_at_once(cluster: MemoryCluster, phase: str) -> None:
    cluster.create(pod("web-0", status={"phase": phase}))
    assert cluster.delete("Pod", "default", "web-0") is None
    assert len(cluster) == 0


def test_finalizers_hold_a_pod_after_its_grace_zero_delete_until_the_last_is_removed(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0", metadata={"finalizers": ["a", "b"]}))
    cluster.delete("Pod", "default", "web-0")
    held = cluster.delete("Pod", "default", "web-0", grace_period_seconds=0, actor="kubelet")
    assert held is not None
    assert held["metadata"]["deletionGracePeriodSeconds"] == 0
    one_left = cluster.patch("Pod", "default", "web-0", {"metadata": {"finalizers": ["b"]}})
    assert cluster.get("Pod", "default", "web-0") is one_left
    cursor = cluster.cursor
    body = copy.deepcopy(one_left)
    body["metadata"]["finalizers"] = []
    final = cluster.update(body)
    assert len(cluster) == 0
    [change] = cluster.changes_since(cursor)[0]
    assert (change.type, change.obj) == ("DELETED", final)
    assert change.obj["metadata"]["deletionTimestamp"] == 10.0


def test_removing_finalizers_of_a_pod_still_in_its_grace_period_waits_for_the_kubelet(
    cluster: MemoryCluster,
) -> None:
    cluster.create(pod("web-0", metadata={"finalizers": ["a"]}))
    cluster.delete("Pod", "default", "web-0")
    cluster.patch("Pod", "default", "web-0", {"metadata": {"finalizers": None}})
    assert cluster.get("Pod", "default", "web-0")["metadata"]["deletionGracePeriodSeconds"] == 30
    assert cluster.delete("Pod", "default", "web-0", grace_period_seconds=0, actor="kubelet") is None


@pytest.mark.parametrize(
    ("finalizers", "remains"),
    [([], False), (["example.com/keep"], True)],
    ids=["no-finalizers-removed-at-once", "finalizer-holds-terminating"],
)
def test_other_kinds_are_removed_at_once_unless_finalizers_hold_them(
    cluster: MemoryCluster, finalizers: list[str], remains: bool
) -> None:
    cluster.create(obj("PersistentVolumeClaim", "data", metadata={"finalizers": finalizers}))
    result = cluster.delete("PersistentVolumeClaim", "default", "data", grace_period_seconds=30)
    if not remains:
        assert result is None
        assert len(cluster) == 0
        return
    assert result is not None
    assert result["metadata"]["deletionTimestamp"] == 10.0
    assert result["metadata"]["deletionGracePeriodSeconds"] == 0
    assert result["metadata"]["generation"] == 2
    assert cluster.delete("PersistentVolumeClaim", "default", "data") is result  # no-op
    cluster.patch("PersistentVolumeClaim", "default", "data", {"metadata": {"finalizers": []}})
    assert len(cluster) == 0


def test_no_finalizer_can_be_added_to_a_terminating_object(cluster: MemoryCluster) -> None:
    cluster.create(obj("ConfigMap", "c", metadata={"finalizers": ["a"]}))
    held = cluster.delete("ConfigMap", "default", "c")
    with pytest.raises(Invalid):
        cluster.patch("ConfigMap", "default", "c", {"metadata": {"finalizers": ["a", "b"]}})
    assert cluster.get("ConfigMap", "default", "c") is held


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [({}, NotFound), ({"grace_period_seconds": -1}, Invalid), ({"propagation": "Sideways"}, Invalid)],
    ids=["missing", "negative-grace", "unknown-propagation"],
)
def test_delete_errors(cluster: MemoryCluster, kwargs: dict[str, Any], error: type[Exception]) -> None:
    if error is not NotFound:
        cluster.create(pod("web-0"))
    with pytest.raises(error):
        cluster.delete("Pod", "default", "web-0", **kwargs)
    assert all(o["metadata"].get("deletionTimestamp") is None for o in cluster.objects())


# -- reads never change afterwards -------------------------------------------------------------------------------


def test_objects_returned_by_reads_are_never_changed_by_later_writes(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0", metadata={"labels": {"a": "1"}}, spec={"c": [1]}))
    seen = [cluster.get("Pod", "default", "web-0")]
    snapshots = [copy.deepcopy(seen[0])]

    def remember(o: Obj | None) -> None:
        if o is not None:
            seen.append(o)
            snapshots.append(copy.deepcopy(o))

    remember(cluster.update({**copy.deepcopy(seen[-1]), "spec": {"c": [2]}}))
    remember(cluster.update_status({**seen[-1], "status": {"phase": "Running"}}))
    remember(cluster.patch("Pod", "default", "web-0", {"metadata": {"labels": {"a": "2"}}, "spec": {"c": [3]}}))
    remember(cluster.list("Pod")[0])
    remember(cluster.delete("Pod", "default", "web-0"))
    cluster.delete("Pod", "default", "web-0", grace_period_seconds=0)
    assert seen == snapshots
    assert len({id(o) for o in seen}) == 5  # every write stored a new dict (list returned the stored one)


def test_caller_changes_to_its_input_do_not_reach_the_store(cluster: MemoryCluster) -> None:
    body = pod("web-0", metadata={"labels": {"a": "1"}}, spec={"containers": [{"name": "app"}]})
    cluster.create(body)
    body["metadata"]["labels"]["a"] = "changed"
    body["spec"]["containers"].append({"name": "sidecar"})
    patch = {"spec": {"containers": [{"name": "x"}]}}
    cluster.patch("Pod", "default", "web-0", patch)
    patch["spec"]["containers"][0]["name"] = "y"
    stored = cluster.get("Pod", "default", "web-0")
    assert stored["metadata"]["labels"] == {"a": "1"}
    assert stored["spec"]["containers"] == [{"name": "x"}]


def test_objects_lists_everything_and_len_counts_it(cluster: MemoryCluster) -> None:
    cluster.create(pod("web-0"))
    cluster.create(obj("Lease", "web-0", namespace="x"))
    assert sorted((o["kind"], o["metadata"]["name"]) for o in cluster.objects()) == [("Lease", "web-0"),
                                                                                    ("Pod", "web-0")]
    assert len(cluster) == 2


@pytest.mark.parametrize(
    "value",
    [{"a": [1, {"b": None}], "c": "s"}, [1.5, True, None], ("t", {"x": 1})],
    ids=["nested-dict", "scalars", "tuple-becomes-list"],
)
def test_clone_is_a_deep_copy(value: Any) -> None:
    copied = clone(value)
    assert copied == (list(value) if isinstance(value, tuple) else value)
    if isinstance(value, dict):
        assert copied["a"] is not value["a"]
        assert copied["a"][1] is not value["a"][1]


def test_clone_sharing_copies_what_is_new_and_shares_what_the_stored_object_holds() -> None:
    kept = {"type": "Ready", "status": "True"}
    stored = {"replicas": 3, "conditions": [kept, {"type": "Available", "status": "False"}], "extra": {"a": 1}}
    fresh = {"type": "Available", "status": "True"}
    extra = {"a": 2}
    written = {"replicas": 4, "conditions": [kept, fresh], "extra": extra}
    copied = clone_sharing(written, stored)
    assert copied == written
    assert copied["conditions"][0] is kept
    assert copied["conditions"][1] is not fresh
    assert copied["extra"] is not extra
    assert copied["conditions"] is not written["conditions"]


def test_a_status_written_back_leaves_nothing_the_caller_can_change_in_the_store(cluster: MemoryCluster) -> None:
    created = cluster.create(pod("web-0"))
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    cluster.update_status({**created, "status": status})
    status["conditions"][0]["status"] = "False"
    status["conditions"].append({"type": "Mine"})
    assert cluster.get("Pod", "default", "web-0")["status"]["conditions"] == [{"type": "Ready", "status": "True"}]
