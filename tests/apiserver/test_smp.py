"""Strategic merge patch, table-driven against what upstream's strategicpatch package produces for the same input
(cases adapted from k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go and kubectl's observed bodies)."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.apiserver.smp import PatchError, strategic_merge

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
    ("a new element is appended",
     POD,
     {"spec": {"containers": [{"name": "c", "image": "c:1"}]}},
     {"spec": {"containers": [*POD["spec"]["containers"], {"name": "c", "image": "c:1"}],
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
    ("$patch: delete on a map deletes it",
     {"spec": {"affinity": {"nodeAffinity": {}}, "x": 1}},
     {"spec": {"affinity": {"$patch": "delete"}}},
     {"spec": {"x": 1}}),
    ("$retainKeys drops the keys it does not list",
     {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
     {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
     {"spec": {"strategy": {"type": "Recreate"}}}),
    ("finalizers are a set: union, then $deleteFromPrimitiveList",
     {"metadata": {"finalizers": ["a", "b"]}},
     {"metadata": {"finalizers": ["c", "a"], "$deleteFromPrimitiveList/finalizers": ["b"]}},
     {"metadata": {"finalizers": ["a", "c"]}}),
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
               "ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}}),
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
