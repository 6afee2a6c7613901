"""Label and field selector strings, parsed and matched as the API server does."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollwise.api.errors import BadRequest
from rollwise.cluster.resources import EVENT_V1, LEASE, POD
from rollwise.cluster.store.selectors import parse_field_selector, parse_label_selector

LABELS = {"app": "web", "tier": "db", "empty": ""}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=api", False),
        ("app!=api", True),
        ("missing!=x", True),  # != matches objects without the key
        ("app in (web,api)", True),
        ("app in (api, cron)", False),
        ("app notin (api)", True),
        ("missing notin (a)", True),
        ("tier notin (db)", False),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier=db", True),
        ("app=web,tier in (x,y)", False),
        ("app in (web),!gone,tier", True),
        ("empty=", True),
    ],
)
def test_label_selector_strings_match_as_upstream(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize("selector", ["app=web,", "a b=c", "app in ()", "app=a b", "-x=1", "app=" + "v" * 64])
def test_malformed_label_selectors_are_bad_requests(selector: str) -> None:
    with pytest.raises(BadRequest):
        parse_label_selector(selector)


POD_OBJ = {"kind": "Pod", "metadata": {"name": "web-0", "namespace": "default"},
           "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}}
EVENT_OBJ = {"kind": "Event", "metadata": {"name": "web.1", "namespace": "default"}, "reason": "SuccessfulCreate",
             "type": "Normal", "involvedObject": {"kind": "StatefulSet", "name": "web", "uid": "u1"}}


@pytest.mark.parametrize(
    ("resource", "obj", "selector", "matches"),
    [
        (POD, POD_OBJ, "metadata.name=web-0", True),
        (POD, POD_OBJ, "metadata.namespace!=default", False),
        (POD, POD_OBJ, "status.phase=Running,spec.nodeName=node-1", True),
        (POD, POD_OBJ, "status.phase==Pending", False),
        (POD, POD_OBJ, "spec.nodeName=", False),
        (EVENT_V1, EVENT_OBJ, "involvedObject.kind=StatefulSet,involvedObject.name=web", True),
        (EVENT_V1, EVENT_OBJ, "involvedObject.uid=u2", False),
        (EVENT_V1, EVENT_OBJ, "reason=SuccessfulCreate,type!=Warning", True),
        (LEASE, {"metadata": {"name": "l"}}, "metadata.name=l", True),
    ],
)
def test_field_selectors_read_the_fields_each_resource_supports(resource, obj, selector, matches) -> None:  # type: ignore[no-untyped-def]
    assert parse_field_selector(selector, resource).matches(obj) is matches


@pytest.mark.parametrize(("resource", "selector"), [(POD, "spec.replicas=1"), (LEASE, "status.phase=Running"),
                                                    (EVENT_V1, "message=x"), (POD, "status.phase")])
def test_unsupported_or_malformed_field_selectors_are_bad_requests(resource, selector) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadRequest) as err:
        parse_field_selector(selector, resource)
    assert err.value.code == 400



@given(st.text(alphabet="ab=!,() inotex.-_/1", max_size=30))
def test_any_selector_text_parses_or_is_a_bad_request(text: str) -> None:
    with contextlib.suppress(BadRequest):
        parse_label_selector(text).matches(LABELS)
    with contextlib.suppress(BadRequest):
        parse_field_selector(text, POD).matches(POD_OBJ)


# Cases from apimachinery's fields/selector_test.go (TestSplitTerms, TestSplitTerm, TestSelectorParse,
# TestUnescapeValue), with its field names x, y, z, k1 ... read as fields a pod supports.
NS_V2 = ("metadata.namespace", False, "v2")


@pytest.mark.parametrize(
    ("selector", "wanted"),
    [
        ("", []),
        ("metadata.name=v", [("metadata.name", False, "v")]),
        ("metadata.name=v1,metadata.namespace=v2", [("metadata.name", False, "v1"), NS_V2]),
        (r"metadata.name=v1\=,metadata.namespace=v2", [("metadata.name", False, "v1="), NS_V2]),
        (r"metadata.name=v1\,,metadata.namespace=v2", [("metadata.name", False, "v1,"), NS_V2]),
        (r"metadata.name=v1\\,metadata.namespace=v2", [("metadata.name", False, "v1\\"), NS_V2]),
        (",,metadata.name=v1,,", [("metadata.name", False, "v1")]),
        ("metadata.name=x,", [("metadata.name", False, "x")]),
        ("metadata.name!=a,status.phase=b", [("metadata.name", True, "a"), ("status.phase", False, "b")]),
        ("metadata.name==a", [("metadata.name", False, "a")]),
        ("metadata.name=", [("metadata.name", False, "")]),
        (r"metadata.name=a||y\=b", [("metadata.name", False, "a||y=b")]),
        (r"metadata.name=a\=\=b", [("metadata.name", False, "a==b")]),
        ("metadata.name=!a", [("metadata.name", False, "!a")]),
    ],
    ids=["empty", "one", "two", "escaped-equals", "escaped-comma", "escaped-backslash", "empty-terms",
         "trailing-comma", "not-equal", "double-equal", "empty-value", "escaped-or", "escaped-equals-twice",
         "bang-in-value"],
)
def test_field_selectors_parse_as_apimachinery_does(selector: str, wanted: list[tuple[str, bool, str]]) -> None:
    got = parse_field_selector(selector, POD).requirements
    assert [(r.field, r.negated, r.value) for r in got] == wanted


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("metadata.name=a||y=b", "invalid field selector: unescaped character in value: 61"),
        ("metadata.name==a==b", "invalid field selector: unescaped character in value: 61"),
        ("metadata.name=a,b", "invalid selector: 'metadata.name=a,b'; can't understand 'b'"),
        ("metadata.name in (a)", "invalid selector: 'metadata.name in (a)'; can't understand 'metadata.name in (a)'"),
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
        (r"metadata.name=a\b", r"invalid field selector: invalid escape sequence: \b"),
        ("metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"),
        ("metadata.name = a", "field label not supported: metadata.name "),
    ],
    ids=["unescaped-equals", "double-equal-twice", "bare-term", "set-based", "no-operator", "unknown-escape",
         "trailing-backslash", "spaces-are-part-of-the-field"],
)
def test_malformed_field_selectors_are_refused_in_apimachinery_s_words(selector: str, message: str) -> None:
    with pytest.raises(BadRequest) as err:
        parse_field_selector(selector, POD)
    assert str(err.value.message).startswith(message), err.value.message


def test_an_escaped_value_matches_the_literal_value() -> None:
    obj = {"metadata": {"name": "a,b=c"}}
    assert parse_field_selector(r"metadata.name=a\,b\=c", LEASE).matches(obj)
