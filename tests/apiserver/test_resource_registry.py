"""One resource registry: the server's table is the world's table (``cluster/resources.py``) seen as REST, so a
resource's names, scope, subresources and verbs are typed once, and a CRD is read into the world's row once."""

from __future__ import annotations

from typing import Any

from rollwise.apiserver.kinds.resources import ALL_VERBS, BUILTINS, Registry, crd_resources, crd_row
from rollwise.cluster.crd.statefulset import crd as rollwise_crd
from rollwise.cluster.resources import BUILTIN_RESOURCES, PROJECT_GROUP, ROLLWISE_STATEFULSET, GroupKind, ResourceTable


def _two_version_crd() -> dict[str, Any]:
    def version(name: str, *, scale: bool) -> dict[str, Any]:
        sub: dict[str, Any] = {"status": {}, **({"scale": {"specReplicasPath": ".spec.size",
                                                             "statusReplicasPath": ".status.size"}} if scale else {})}
        return {"name": name, "served": True, "storage": name == "v1", "subresources": sub,
                "schema": {"openAPIV3Schema": {"type": "object"}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Cluster",
                     "names": {"kind": "Widget", "plural": "widgets", "shortNames": ["wd"], "categories": ["all"]},
                     "versions": [version("v1", scale=True), version("v2", scale=False),
                                  {"name": "v0", "served": False}]}}


def test_every_served_built_in_is_a_row_of_the_world_table_and_repeats_none_of_its_names() -> None:
    world = {row.group_kind: row for row in BUILTIN_RESOURCES}
    for served in BUILTINS:
        assert served.row is world[served.row.group_kind]
        assert (served.group, served.kind, served.plural, served.singular, served.short_names, served.namespaced,
                served.categories, served.status, served.scale, served.connect) == (
            served.row.group, served.row.kind, served.row.plural, served.row.singular, served.row.short_names,
            served.row.namespaced, served.row.categories, served.row.status, served.row.scale, served.row.connect)
        assert served.version == served.row.version
    assert not any(served.group == PROJECT_GROUP for served in BUILTINS)  # the project's kinds come from their CRDs


def test_a_review_serves_only_create_and_a_stored_row_every_verb() -> None:
    verbs = {served.kind: served.verbs for served in BUILTINS}
    assert verbs["SelfSubjectAccessReview"] == ("create",)
    assert verbs["Pod"] == ALL_VERBS


def test_a_crd_is_one_row_of_the_store_keyed_by_its_first_served_version() -> None:
    table = ResourceTable.builtin()
    Registry().register_in(table, _two_version_crd())
    row = table.known(GroupKind("example.com", "Widget"))
    assert row == crd_row(_two_version_crd())
    assert row is not None
    assert (row.versions, row.version, row.plural, row.short_names, row.namespaced, row.scale) == (
        ("v1", "v2"), "v1", "widgets", ("wd",), False, True)
    assert table.scoped("Widget.example.com") == (GroupKind("example.com", "Widget"), False)


def test_each_served_version_of_a_crd_keeps_its_own_subresources_over_the_crds_names() -> None:
    v1, v2 = crd_resources(_two_version_crd())
    assert (v1.version, v1.scale, v1.scale_paths[:2]) == ("v1", True, (".spec.size", ".status.size"))
    assert (v2.version, v2.scale, v2.status) == ("v2", False, True)
    assert v1.plural == v2.plural == "widgets" and v1.group_resource == "widgets.example.com"
    assert v1.custom and v1.key == v1.served_key == GroupKind("example.com", "Widget")


def test_the_project_crd_replaces_the_built_in_row_and_is_served_with_its_printer_columns() -> None:
    table = ResourceTable.builtin()
    registry = Registry()
    registry.register_in(table, rollwise_crd())
    served = registry.find(PROJECT_GROUP, "v1alpha1", "statefulsets")
    assert served is not None and served.printer_columns
    assert table.known(ROLLWISE_STATEFULSET) == served.row
