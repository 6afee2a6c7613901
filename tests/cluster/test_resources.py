"""The resource table and a store keyed by group and kind: the built-in and the project's StatefulSet differ."""

from __future__ import annotations

import pytest

from rollwise.api.errors import NotFound
from rollwise.cluster.resources import LEASE, POD, ROLLWISE_STATEFULSET, STATEFULSET, GroupKind, ResourceTable
from rollwise.cluster.store.memory import MemoryCluster


def _set(api_version: str, replicas: int) -> dict:  # type: ignore[type-arg]
    return {"apiVersion": api_version, "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": replicas}}


def test_apps_and_rollwise_statefulsets_of_one_name_are_different_objects() -> None:
    store = MemoryCluster(clock=lambda: 0.0)
    builtin = store.create(_set("apps/v1", 1))
    custom = store.create(_set("apps.rollwise.dev/v1alpha1", 2))
    assert store.get(STATEFULSET, "default", "web") is builtin
    assert store.get(ROLLWISE_STATEFULSET, "default", "web") is custom
    assert store.get("StatefulSet", "default", "web") is builtin  # a bare kind names the built-in
    assert store.get("StatefulSet.apps.rollwise.dev", "default", "web") is custom
    store.delete(STATEFULSET, "default", "web")
    assert store.list("StatefulSet") == []
    assert store.list(ROLLWISE_STATEFULSET) == [custom]
    with pytest.raises(NotFound):
        store.get(STATEFULSET, "default", "web")


@pytest.mark.parametrize(
    ("ref", "expected"),
    [("Pod", POD), ("Lease", LEASE), ("StatefulSet", STATEFULSET),
     ("StatefulSet.apps.rollwise.dev", ROLLWISE_STATEFULSET), ("Widget", GroupKind("", "Widget")),
     (GroupKind("x.io", "Thing"), GroupKind("x.io", "Thing"))],
)
def test_references_resolve_to_group_kinds(ref: object, expected: GroupKind) -> None:
    assert ResourceTable.builtin().resolve(ref) == expected  # type: ignore[arg-type]


def test_the_table_names_plurals_short_names_scope_and_subresources() -> None:
    table = ResourceTable.builtin()
    rsts = table.by_plural("apps.rollwise.dev", "statefulsets")
    assert rsts is not None and rsts.short_names == ("rsts",) and rsts.status and rsts.scale
    assert rsts.api_version == "apps.rollwise.dev/v1alpha1"
    assert [r.group for r in table.by_name("sts")] == ["apps"]
    assert {r.group for r in table.by_name("statefulsets")} == {"apps", "apps.rollwise.dev"}
    namespaces = table.by_plural("", "namespaces")
    assert namespaces is not None and not namespaces.namespaced


def test_cluster_scoped_objects_have_no_namespace() -> None:
    store = MemoryCluster(clock=lambda: 0.0)
    ns = store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "namespace": "x"}})
    assert "namespace" not in ns["metadata"]
    assert store.get("Namespace", "", "team-a") is ns
    assert store.get("Namespace", "anything", "team-a") is ns
    assert store.list("Namespace", "default") == [ns]


def test_a_registered_resource_is_served_and_a_bare_kind_keeps_its_first_meaning() -> None:
    from rollwise.cluster.resources import Resource

    table = ResourceTable.builtin()
    table.register(Resource(group="example.com", versions=("v1",), kind="Pod", plural="pods", singular="pod"))
    assert table.resolve("Pod") == POD
    assert table.of({"apiVersion": "example.com/v1", "kind": "Pod"}) == GroupKind("example.com", "Pod")
    table.unregister(POD)
    assert table.resolve("Pod") == GroupKind("example.com", "Pod")
