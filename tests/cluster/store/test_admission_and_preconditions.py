"""Admission in one place (defaulting, validation, immutability, the strict-fields hook) and delete preconditions."""

from __future__ import annotations

import pytest

from rollwise.api import validation
from rollwise.api.errors import Conflict, FieldError, Invalid
from rollwise.api.features import FeatureGates
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, GroupKind
from rollwise.cluster.store.admission import Admission
from rollwise.cluster.store.memory import MemoryCluster


def _sts(api_version: str = "apps/v1", **spec: object) -> dict:  # type: ignore[type-arg]
    return {"apiVersion": api_version, "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "serviceName": "web",
                     "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [
                         {"name": "c", "image": "i"}]}}, **spec}}


@pytest.fixture
def store() -> MemoryCluster:
    return MemoryCluster(clock=lambda: 0.0, admit=Admission(gates=FeatureGates()).hooks())


@pytest.mark.parametrize("api_version", ["apps/v1", "apps.rollwise.dev/v1alpha1"])
def test_both_statefulset_resources_are_defaulted_and_validated(store: MemoryCluster, api_version: str) -> None:
    created = store.create(_sts(api_version))
    assert created["spec"]["replicas"] == 1 and created["spec"]["podManagementPolicy"] == "OrderedReady"
    with pytest.raises(Invalid) as err:
        store.create({**_sts(api_version, replicas=-1), "metadata": {"name": "bad"}})
    assert "spec.replicas" in [e.path for e in err.value.errors]
    group = api_version.partition("/")[0]
    assert str(err.value).startswith(f'StatefulSet.{group} "bad" is invalid: spec.replicas')


def test_immutable_fields_are_refused_on_update(store: MemoryCluster) -> None:
    store.create(_sts())
    with pytest.raises(Invalid):
        store.patch("StatefulSet", "default", "web", {"spec": {"serviceName": "other"}})
    store.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r"},
                  "data": {"x": 1}, "revision": 1})
    store.patch("ControllerRevision", "default", "r", {"revision": 2})
    with pytest.raises(Invalid):
        store.patch("ControllerRevision", "default", "r", {"data": {"x": 2}})
    store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                  "spec": {"containers": [{"name": "c", "image": "i:1"}]}})
    store.patch("Pod", "default", "p", {"spec": {"containers": [{"name": "c", "image": "i:2"}]}})
    with pytest.raises(Invalid):
        store.patch("Pod", "default", "p", {"spec": {"nodeName": "n"}})


def test_the_strict_fields_hook_refuses_before_anything_is_stored() -> None:
    def strict(gk: GroupKind, obj: dict) -> list[FieldError]:  # type: ignore[type-arg]
        return [FieldError(path="spec.bogus", rule="unknown field", kind="Forbidden")] if "bogus" in obj["spec"] \
            else []

    store = MemoryCluster(clock=lambda: 0.0, admit=Admission(gates=FeatureGates(), strict_fields=strict).hooks())
    with pytest.raises(Invalid):
        store.create(_sts("apps.rollwise.dev/v1alpha1", bogus=1))
    assert store.list(ROLLWISE_STATEFULSET) == []


def test_delete_preconditions_on_uid_and_resource_version(store: MemoryCluster) -> None:
    cm = store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    with pytest.raises(Conflict):
        store.delete("ConfigMap", "default", "c", preconditions={"uid": "someone-else"})
    with pytest.raises(Conflict):
        store.delete("ConfigMap", "default", "c", preconditions={"resourceVersion": "99"})
    assert store.get("ConfigMap", "default", "c") is cm
    assert store.delete("ConfigMap", "default", "c", preconditions={
        "uid": cm["metadata"]["uid"], "resourceVersion": cm["metadata"]["resourceVersion"]}) is None


def test_a_set_admitted_on_create_with_every_gate_on_is_not_validated_again_by_the_controller(
        store: MemoryCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    store.create(_sts())
    stored = store.get("StatefulSet", "default", "web")
    calls: list[object] = []
    monkeypatch.setattr(validation, "validate_statefulset", lambda *a, **k: calls.append(a) or [])
    assert validation.structural_errors({**stored, "status": {"replicas": 0}}) == []  # a status write's copy
    assert calls == []


def test_a_set_admitted_on_update_is_validated_again_by_the_controller(
        store: MemoryCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """An update tolerates what a create refuses (the API server's ratcheting): its verdict is not the
    controller's."""
    store.create(_sts())
    store.patch("StatefulSet", "default", "web", {"spec": {"replicas": 3}})
    stored = store.get("StatefulSet", "default", "web")
    calls: list[object] = []
    monkeypatch.setattr(validation, "validate_statefulset", lambda *a, **k: calls.append(a) or [])
    validation.structural_errors(stored)
    assert len(calls) == 1
