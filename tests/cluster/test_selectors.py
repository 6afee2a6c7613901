"""Label and field selector strings, parsed and matched as the API server does."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollwise.api.errors import BadRequest
from rollwise.cluster.resources import EVENT_V1, LEASE, POD
from rollwise.cluster.selectors import parse_field_selector, parse_label_selector

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
