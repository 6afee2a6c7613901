"""A custom resource's schema walk (pruning, defaults, types) skips a part equal to the stored object's only when the
stored part comes out of today's schema as it is (`schema._unchanged_and_kept`): the result is always the full
walk's, also for an object stored before its CRD changed (a field now pruned, a default now added)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rollwise.apiserver.admission import schema as schema_module
from rollwise.apiserver.admission.schema import admit_custom, prune_and_check, pruned_fields

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["size"], "properties": {
        "size": {"type": "integer", "minimum": 1},
        "mode": {"type": "string", "default": "fast", "enum": ["fast", "safe"]},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
    "status": {"type": "object", "properties": {"ready": {"type": "integer"}}}}}

SPEC = st.fixed_dictionaries({}, optional={
    "size": st.one_of(st.integers(0, 2), st.just("2")),
    "mode": st.sampled_from(["fast", "safe", "slow"]),
    "tags": st.lists(st.sampled_from("ab"), max_size=3),
    "extra": st.dictionaries(st.sampled_from("xy"), st.integers(0, 1), max_size=2),
    "unknown": st.integers(0, 1)})
OBJ = st.fixed_dictionaries({"apiVersion": st.just("x/v1"), "kind": st.just("X"), "metadata": st.just({"name": "n"})},
                            optional={"spec": SPEC, "status": st.fixed_dictionaries(
                                {}, optional={"ready": st.integers(0, 1), "gone": st.just(1)})})


@settings(max_examples=200, deadline=None)
@given(OBJ, OBJ, st.sampled_from(["spec", "status", "both", "none"]))
def test_the_result_is_the_full_walks_whatever_was_stored(obj: dict[str, Any], old: dict[str, Any],
                                                          same: str) -> None:
    for key in ("spec", "status"):
        if same in (key, "both") and key in old:
            obj[key] = copy.deepcopy(old[key])  # the part as stored, maybe from before the schema changed
    assert prune_and_check(obj, SCHEMA, old) == prune_and_check(obj, SCHEMA)
    assert pruned_fields(obj, SCHEMA, old) == pruned_fields(obj, SCHEMA)


def test_a_stored_spec_is_walked_once_however_many_status_writes_follow(monkeypatch: Any) -> None:
    stored, errors = admit_custom({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"},
                                   "spec": {"size": 2, "tags": ["a"]}}, None, SCHEMA)
    assert not errors and stored["spec"]["mode"] == "fast"
    walked: list[str] = []
    real = schema_module._walk_object
    monkeypatch.setattr(schema_module, "_walk_object",
                        lambda value, schema, path, *a, **kw: walked.append(path) or real(value, schema, path, *a,
                                                                                         **kw))
    for ready in range(4):
        out, errors = admit_custom({**copy.deepcopy(stored), "status": {"ready": ready}}, stored, SCHEMA)
        assert not errors and out["spec"] == stored["spec"]
    assert walked.count("spec") == 1, "judged once, when first met as a stored part"
    assert walked.count("status") == 4
