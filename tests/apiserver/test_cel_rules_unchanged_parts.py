"""CRD rules walk the object as it is and skip what did not change (`cel_rules.rule_errors`): the errors are exactly
those of judging every node on CEL's view of the whole object, as kube-apiserver does, ratcheting and transition
rules included, whatever the old object was; and a part equal to the stored one is judged once per stored part."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from rollwise.api.errors import FieldError
from rollwise.apiserver.admission import cel_rules
from rollwise.apiserver.admission.cel_rules import rule_errors

STR = {"type": "string"}
NOT_X = [{"rule": "!has(self.a) || self.a != 'x'"}]
SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "x-kubernetes-validations": [
        {"rule": "!has(self.name) || size(self.name) < 3", "message": "short name"},
        {"rule": "!has(self.name) || !has(oldSelf.name) || self.name == oldSelf.name", "message": "name fixed"}],
        "properties": {
            "name": STR,
            "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": STR},
                     "x-kubernetes-validations": [{"rule": "!has(self.a) || self.a != 'x'"}]},
            "atomic": {"type": "array", "items": {"type": "object", "properties": {"a": STR},
                                                  "x-kubernetes-validations": NOT_X}},
            "keyed": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                      "items": {"type": "object", "properties": {"k": STR, "a": STR}, "x-kubernetes-validations": [
                          {"rule": "!has(self.a) || self.a != 'x'"},
                          {"rule": "!has(self.a) || !has(oldSelf.a) || self.a >= oldSelf.a", "message": "grows"}]}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": STR},
                "x-kubernetes-validations": [{"rule": "!has(self.a) || self.a != 'x'"}]}},
            "byName": {"type": "object", "additionalProperties": {
                "type": "string", "x-kubernetes-validations": [{"rule": "self != 'x'"}]}}}},
    "status": {"type": "object", "properties": {"n": {"type": "integer"}},
               "x-kubernetes-validations": [{"rule": "!has(self.n) || self.n < 2"}]}}}

LETTER = st.sampled_from(["", "x", "y", "yy", "abc"])
ITEM = st.fixed_dictionaries({}, optional={"a": LETTER, "junk": st.integers(0, 1)})
SPEC = st.fixed_dictionaries({}, optional={
    "name": LETTER,
    "open": st.fixed_dictionaries({}, optional={"a": LETTER, "kept": st.integers(0, 1)}),
    "atomic": st.lists(ITEM, max_size=2),
    "keyed": st.lists(st.fixed_dictionaries({"k": st.sampled_from("pq")}, optional={"a": LETTER}), max_size=2,
                      unique_by=lambda item: item["k"]),
    "tags": st.lists(ITEM, max_size=2, unique_by=lambda item: repr(sorted(item.items()))),
    "byName": st.dictionaries(st.sampled_from("uv"), LETTER, max_size=2)})
OBJ = st.fixed_dictionaries({"metadata": st.just({"name": "n"}), "spec": SPEC},
                            optional={"status": st.fixed_dictionaries({}, optional={"n": st.integers(0, 3)})})


def _reference(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
    """Every node judged on CEL's view of the whole object: the walk before parts were skipped."""
    errors: list[FieldError] = []

    def walk(value: Any, was: Any, schema: Mapping[str, Any], path: str) -> None:
        for rule in schema.get("x-kubernetes-validations") or ():
            error = cel_rules._check(rule, value, was, schema, path)
            if error is not None:
                errors.append(error)
        if isinstance(value, Mapping):
            props, additional = schema.get("properties") or {}, schema.get("additionalProperties")
            for key, child in value.items():
                child_schema = props.get(key) if key in props else additional
                if isinstance(child_schema, Mapping):
                    walk(child, was.get(key) if isinstance(was, Mapping) else None, child_schema,
                         f"{path}.{key}" if path else key)
        elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
            kind = schema.get("x-kubernetes-list-type")
            for i, item in enumerate(value):
                old_item = None
                if isinstance(was, list) and kind == "map":
                    old_item = next((o for o in was if o.get("k") == item.get("k")), None)
                elif isinstance(was, list) and kind == "set" and item in was:
                    old_item = item
                walk(item, old_item, schema["items"], f"{path}[{i}]")

    view = cel_rules._view
    walk(view(cel_rules._root_view(obj), SCHEMA),
         None if old is None else view(cel_rules._root_view(old), SCHEMA), SCHEMA, "")
    return errors


@settings(max_examples=150, deadline=None)
@given(OBJ, st.one_of(st.none(), OBJ), st.booleans())
def test_the_errors_are_those_of_judging_every_node_on_the_whole_view(obj: dict[str, Any],
                                                                      old: dict[str, Any] | None,
                                                                      same: bool) -> None:
    if same and old is not None:
        obj = {**copy.deepcopy(old), "status": obj.get("status", {})}  # a status write: the spec as stored
    expected = _reference(obj, old)
    assert rule_errors(obj, old, SCHEMA) == expected
    assert rule_errors(copy.deepcopy(obj), old, SCHEMA) == expected, "again, from the memo where a part is unchanged"


def test_a_stored_spec_is_judged_once_however_many_status_writes_follow(monkeypatch: Any) -> None:
    stored = {"metadata": {"name": "n"}, "spec": {"name": "ab", "keyed": [{"k": "p", "a": "y"}]}, "status": {"n": 0}}
    calls = []
    real = cel_rules._evaluate
    monkeypatch.setattr(cel_rules, "_evaluate", lambda rule, data, *a: calls.append(rule) or real(rule, data, *a))
    for _ in range(5):
        assert rule_errors({**copy.deepcopy(stored), "status": {"n": 1}}, stored, SCHEMA) == []
    spec_rules = [rule for rule in calls if "oldSelf" in rule]
    assert len(spec_rules) == 2, "the transition rules of the spec and its one keyed item ran for the first write only"
    assert calls.count("!has(self.n) || self.n < 2") == 5
