"""Strategic merge patch, table-driven against what upstream's strategicpatch package produces for the same input
(cases adapted from k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go and kubectl's observed bodies)."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.apiserver.storage.smp import PatchError, strategic_merge

POD = {"spec": {"containers": [{"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}]},
                               {"name": "b", "image": "b:1"}],
                "volumes": [{"name": "v1", "emptyDir": {}}]}}

CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ("maps merge and null deletes",
     {"metadata": {"labels": {"a": "1", "b": "2"}}},
     {"metadata": {"labels": {"b": None, "c": "3"}}},
     {"metadata": {"labels": {"a": "1", "c": "3"}}}),
    ("containers merge by name, the untouched one stays",
     POD,
     {"spec": {"containers": [{"name": "a", "image": "a:2"}]}},
     {"spec": {"containers": [{"name": "a", "image": "a:2", "env": [{"name": "X", "value": "1"}]},
                              {"name": "b", "image": "b:1"}],
               "volumes": [{"name": "v1", "emptyDir": {}}]}}),
    ("kubectl set image body: $setElementOrder keeps the order",
     POD,
     {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
               "containers": [{"image": "a:3", "name": "a"}]}},
     {"spec": {"containers": [{"name": "b", "image": "b:1"},
                              {"name": "a", "image": "a:3", "env": [{"name": "X", "value": "1"}]}],
               "volumes": [{"name": "v1", "emptyDir": {}}]}}),
    ("a new element goes before the live ones, as kube-apiserver puts it",
     POD,
     {"spec": {"containers": [{"name": "c", "image": "c:1"}]}},
     {"spec": {"containers": [{"name": "c", "image": "c:1"}, *POD["spec"]["containers"]],
               "volumes": [{"name": "v1", "emptyDir": {}}]}}),
    ("$patch: delete removes one element by its merge key",
     POD,
     {"spec": {"containers": [{"name": "b", "$patch": "delete"}]}},
     {"spec": {"containers": [POD["spec"]["containers"][0]], "volumes": [{"name": "v1", "emptyDir": {}}]}}),
    ("$patch: replace on a map replaces it (kubectl rollout undo)",
     {"spec": {"template": {"metadata": {"annotations": {"x": "1"}}, "spec": {"containers": [{"name": "a"}]}}}},
     {"spec": {"template": {"$patch": "replace", "spec": {"containers": [{"name": "z", "image": "z:1"}]}}}},
     {"spec": {"template": {"spec": {"containers": [{"name": "z", "image": "z:1"}]}}}}),
    ("$patch: replace inside a merge list replaces the list",
     POD,
     {"spec": {"volumes": [{"name": "v2", "configMap": {"name": "c"}}, {"$patch": "replace"}]}},
     {"spec": {"containers": POD["spec"]["containers"], "volumes": [{"name": "v2", "configMap": {"name": "c"}}]}}),
    ("$patch: delete on a map empties it",
     {"spec": {"affinity": {"nodeAffinity": {}}, "x": 1}},
     {"spec": {"affinity": {"$patch": "delete"}}},
     {"spec": {"affinity": {}, "x": 1}}),
    ("$retainKeys drops the keys it does not list",
     {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
     {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
     {"spec": {"strategy": {"type": "Recreate"}}}),
    ("finalizers are a set: union, then $deleteFromPrimitiveList",
     {"metadata": {"finalizers": ["a", "b"]}},
     {"metadata": {"finalizers": ["c", "a"], "$deleteFromPrimitiveList/finalizers": ["b"]}},
     {"metadata": {"finalizers": ["c", "a"]}}),
    ("lists without a merge key are replaced",
     {"spec": {"containers": [{"name": "a", "args": ["x", "y"]}]}},
     {"spec": {"containers": [{"name": "a", "args": ["z"]}]}},
     {"spec": {"containers": [{"name": "a", "args": ["z"]}]}}),
    ("container ports merge by containerPort, service ports by port",
     {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http"}]}],
               "ports": [{"port": 80, "targetPort": 8080}]}},
     {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
               "ports": [{"port": 443}]}},
     {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}]}],
               "ports": [{"port": 443}, {"port": 80, "targetPort": 8080}]}}),
    ("env merges by name and a null value deletes a field of the element",
     {"env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
     {"env": [{"name": "B", "value": None, "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]},
     {"env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]}),
    ("conditions merge by type",
     {"status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Other", "status": "True"}]}},
     {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
     {"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Other", "status": "True"}]}}),
]


@pytest.mark.parametrize(("original", "patch", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_strategic_merge_matches_upstream(original: dict[str, Any], patch: dict[str, Any],
                                          expected: dict[str, Any]) -> None:
    assert strategic_merge(original, patch) == expected


def _named(*items: str | dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": i} if isinstance(i, str) else i for i in items]


# From apimachinery's strategicpatch/patch_test.go: customStrategicMergePatchTestCaseData, the raw cases of
# customStrategicMergePatchRawTestCases and strategicMergePatchRawTestCases (their Current, ThreeWay and Result,
# compared there as exact JSON), with its mergingList (merge key name) read as containers and its mergingIntList
# (merge strategy) as finalizers.
UPSTREAM: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ("preserve the order from the patch in a merging list",
     {"containers": _named("1", {"name": "2", "value": "b"}, "3")},
     {"containers": _named({"name": "3", "value": "c"}, {"name": "1", "value": "a"}, {"name": "2", "other": "x"})},
     {"containers": _named({"name": "3", "value": "c"}, {"name": "1", "value": "a"},
                           {"name": "2", "value": "b", "other": "x"})}),
    ("preserve the order from the patch in a merging list 2",
     {"containers": _named("1", {"name": "2", "value": "b"}, "3")},
     {"containers": _named({"name": "3", "value": "c"}, {"name": "1", "value": "a"})},
     {"containers": _named({"name": "2", "value": "b"}, {"name": "3", "value": "c"}, {"name": "1", "value": "a"})}),
    ("preserve the order from the patch in a merging int list",
     {"finalizers": ["1", "2", "3"]}, {"finalizers": ["3", "1", "2"]}, {"finalizers": ["3", "1", "2"]}),
    ("preserve the order from the patch in a merging int list 2",
     {"finalizers": ["1", "2", "3"]}, {"finalizers": ["3", "1"]}, {"finalizers": ["2", "3", "1"]}),
    ("$setElementOrder contains item that is not present in the list to be merged",
     {"containers": _named("1", "3")},
     {"$setElementOrder/containers": _named("3", "2", "1"),
      "containers": _named({"name": "3", "value": "3"}, {"name": "1", "value": "1"})},
     {"containers": _named({"name": "3", "value": "3"}, {"name": "1", "value": "1"})}),
    ("$setElementOrder contains item that is not present in the int list to be merged",
     {"finalizers": ["1", "3"]}, {"$setElementOrder/finalizers": ["3", "2", "1"]}, {"finalizers": ["3", "1"]}),
    ("delete items in lists of scalars",
     {"finalizers": ["1", "2", "3", "4"]},
     {"$setElementOrder/finalizers": ["1", "2"], "$deleteFromPrimitiveList/finalizers": ["3"]},
     {"finalizers": ["1", "2", "4"]}),
    ("delete all duplicate items in lists of scalars",
     {"finalizers": ["1", "2", "3", "3", "4"]},
     {"$setElementOrder/finalizers": ["1", "2"], "$deleteFromPrimitiveList/finalizers": ["3"]},
     {"finalizers": ["1", "2", "4"]}),
    ("merge lists of maps",
     {"containers": _named({"name": "1", "other": "a"}, {"name": "2", "value": "2", "other": "b"})},
     {"$setElementOrder/containers": _named("4", "1", "2", "3"),
      "containers": _named({"name": "4", "value": "4"}, {"name": "3", "value": "3"})},
     {"containers": _named({"name": "4", "value": "4"}, {"name": "1", "other": "a"},
                           {"name": "2", "value": "2", "other": "b"}, {"name": "3", "value": "3"})}),
    ("add field to map in merging list with conflict",
     {"containers": _named({"name": "1", "other": "a"}, {"name": "3", "value": "2", "other": "b"})},
     {"$setElementOrder/containers": _named("1", "2"),
      "containers": _named({"name": "1", "value": "1"}, {"name": "2", "value": "2"})},
     {"containers": _named({"name": "1", "value": "1", "other": "a"}, {"name": "2", "value": "2"},
                           {"name": "3", "value": "2", "other": "b"})}),
    ("delete map from merging list",
     {"containers": _named("1", {"name": "2", "other": "b"})},
     {"$setElementOrder/containers": _named("2"), "containers": _named({"name": "1", "$patch": "delete"})},
     {"containers": _named({"name": "2", "other": "b"})}),
    ("delete missing map from merging list with conflict",
     {"containers": _named({"name": "3", "other": "a"})},
     {"$setElementOrder/containers": _named("2"),
      "containers": _named("2", {"name": "1", "$patch": "delete"})},
     {"containers": _named("2", {"name": "3", "other": "a"})}),
    ("add map and delete map from merging list",
     {"containers": _named("1", {"name": "2", "other": "b"}, {"name": "4", "other": "c"})},
     {"$setElementOrder/containers": _named("2", "3"),
      "containers": _named("3", {"name": "1", "$patch": "delete"})},
     {"containers": _named({"name": "2", "other": "b"}, {"name": "4", "other": "c"}, "3")}),
    ("add map and delete map from merging list with conflict",
     {"containers": _named({"name": "1", "other": "a"}, {"name": "4", "other": "c"})},
     {"$setElementOrder/containers": _named("2", "3"),
      "containers": _named("2", "3", {"name": "1", "$patch": "delete"})},
     {"containers": _named({"name": "4", "other": "c"}, "2", "3")}),
]


@pytest.mark.parametrize(("original", "patch", "expected"), [c[1:] for c in UPSTREAM], ids=[c[0] for c in UPSTREAM])
def test_strategic_merge_orders_lists_as_apimachinery_s_own_tables(original: dict[str, Any], patch: dict[str, Any],
                                                                    expected: dict[str, Any]) -> None:
    assert strategic_merge(original, patch) == expected


@pytest.mark.parametrize(("original", "patch", "words"), [
    ({"containers": _named("1", "3", "2")},
     {"$setElementOrder/containers": _named("1", "2", "3"),
      "containers": _named({"name": "3", "value": "3"}, {"name": "1", "value": "1"})}, "doesn't match"),
    ({"finalizers": ["1", "3", "2"]}, {"$setElementOrder/finalizers": ["1", "2", "3"], "finalizers": ["3", "1"]},
     "doesn't match"),
    ({"containers": _named({"name": "1", "value": "a"})}, {"containers": [{"value": "b"}]},
     "does not contain declared merge key"),
    ({"spec": {"strategy": {"type": "A"}}}, {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}},
     "invalid patch format of retainKeys"),
], ids=["order-does-not-match", "int-order-does-not-match", "missing-merge-key", "key-outside-retain-keys"])
def test_patches_apimachinery_refuses_are_refused(original: dict[str, Any], patch: dict[str, Any],
                                                  words: str) -> None:
    with pytest.raises(PatchError) as err:
        strategic_merge(original, patch)
    assert words in str(err.value)


def test_strategic_merge_leaves_its_inputs_unchanged() -> None:
    import copy
    original, patch = copy.deepcopy(POD), {"spec": {"containers": [{"name": "a", "image": "new"}]}}
    strategic_merge(original, patch)
    assert original == POD
    assert patch == {"spec": {"containers": [{"name": "a", "image": "new"}]}}


@pytest.mark.parametrize("patch", [
    {"spec": {"containers": [{"image": "no-name"}]}},
    {"spec": {"$patch": "bogus"}},
    {"spec": {"$setElementOrder/containers": "not a list"}},
], ids=["element without its merge key", "unknown directive", "order that is not a list"])
def test_malformed_strategic_patch_is_refused(patch: dict[str, Any]) -> None:
    with pytest.raises(PatchError):
        strategic_merge(POD, patch)
