"""The default admission plugins that change what a pod or a claim looks like (apiserver/admission/plugins.py), through
``up``'s store as any write reaches it: DefaultTolerationSeconds, ServiceAccount, Priority and DefaultStorageClass."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from rollwise.api.errors import Forbidden
from rollwise.apiserver.storage.store import ApiStore
from rollwise.cluster.resources import POD, PVC

NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
               "tolerationSeconds": 300}


@pytest.fixture
def store() -> Iterator[ApiStore]:
    ticks = itertools.count(1000)
    s = ApiStore(clock=lambda: float(next(ticks)))  # each write a second later: "newest" is well defined
    try:
        yield s
    finally:
        s.close()


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], **spec}}


def _create(store: ApiStore, obj: dict[str, Any]) -> dict[str, Any]:
    return store.cluster.create(obj, actor="admin")


def test_a_new_pod_tolerates_not_ready_and_unreachable_nodes_for_300_seconds(store: ApiStore) -> None:
    assert _create(store, _pod("plain"))["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
           "tolerationSeconds": 10}
    assert _create(store, _pod("own", tolerations=[own]))["spec"]["tolerations"] == [own, UNREACHABLE]
    everything = {"operator": "Exists"}
    assert _create(store, _pod("all", tolerations=[everything]))["spec"]["tolerations"] == [everything]
    no_schedule = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoSchedule"}
    assert _create(store, _pod("other-effect", tolerations=[no_schedule]))["spec"]["tolerations"] == [
        no_schedule, NOT_READY, UNREACHABLE]


def test_a_pod_runs_as_the_default_service_account_under_both_field_names(store: ApiStore) -> None:
    spec = _create(store, _pod("sa"))["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    spec = _create(store, _pod("named", serviceAccountName="builder"))["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("builder", "builder")


def test_a_pod_takes_its_priority_from_its_class_or_the_global_default(store: ApiStore) -> None:
    spec = _create(store, _pod("critical", priorityClassName="system-node-critical"))["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (2000001000, "PreemptLowerPriority")
    plain = _create(store, _pod("plain"))["spec"]
    assert (plain["priority"], plain["preemptionPolicy"], "priorityClassName" in plain) == (
        0, "PreemptLowerPriority", False)
    _create(store, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch"},
                    "value": 100, "globalDefault": True, "preemptionPolicy": "Never"})
    spec = _create(store, _pod("defaulted"))["spec"]
    assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == ("batch", 100, "Never")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"priorityClassName": "gold"}, 'pods "p" is forbidden: no PriorityClass with name gold was found'),
        ({"priority": 7}, 'pods "p" is forbidden: the integer value of priority (7) must not be provided in pod '
                          "spec; priority admission controller computed 0 from the given PriorityClass name"),
        ({"priorityClassName": "system-cluster-critical", "preemptionPolicy": "Never"},
         'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; '
         "priority admission controller computed PreemptLowerPriority from the given PriorityClass name"),
    ],
    ids=["unknown-class", "priority-given", "policy-given"],
)
def test_a_pod_whose_priority_the_class_does_not_give_is_forbidden(store: ApiStore, spec: dict[str, Any],
                                                                   message: str) -> None:
    with pytest.raises(Forbidden) as err:
        _create(store, _pod("p", **spec))
    assert err.value.message == message
    assert store.cluster.list(POD) == []


def _claim(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}}


def _class(name: str, default: bool) -> dict[str, Any]:
    annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name, "annotations": annotations}, "provisioner": "example.com/disk"}


def test_a_claim_that_names_no_class_gets_the_newest_default_one(store: ApiStore) -> None:
    assert "storageClassName" not in _create(store, _claim("before"))["spec"]  # no default class yet
    _create(store, _class("slow", default=False))
    _create(store, _class("standard", default=True))
    assert _create(store, _claim("one"))["spec"]["storageClassName"] == "standard"
    assert _create(store, _claim("none", storageClassName=""))["spec"]["storageClassName"] == ""
    assert _create(store, _claim("slow", storageClassName="slow"))["spec"]["storageClassName"] == "slow"
    _create(store, _class("fast", default=True))
    assert _create(store, _claim("two"))["spec"]["storageClassName"] == "fast"
    assert "storageClassName" not in store.cluster.get(PVC, "default", "before")["spec"]
