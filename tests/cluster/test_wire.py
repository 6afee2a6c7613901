"""The wire codec: RFC 3339 Time and MicroTime at the known paths, float seconds inside, round trips pinned."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollwise.api.errors import Invalid
from rollwise.cluster.wire import decode, encode, format_micro_time, format_time, parse_time

SECONDS = st.integers(min_value=0, max_value=4_102_444_800).map(float)  # up to 2100
MICROS = st.integers(min_value=0, max_value=4_102_444_800 * 1_000_000).map(lambda n: n / 1_000_000)


def _pod(t: st.DrawFn) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "creationTimestamp": t(SECONDS), "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"phase": "Running", "startTime": t(SECONDS),
                   "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": t(SECONDS)}],
                   "containerStatuses": [{"name": "c", "state": {"running": {"startedAt": t(SECONDS)}},
                                          "lastState": {"terminated": {"startedAt": t(SECONDS),
                                                                       "finishedAt": t(SECONDS), "exitCode": 1}}}]},
    }


@st.composite
def internal_objects(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["Pod", "Lease", "Event", "events.k8s.io", "StatefulSet"]))
    if kind == "Pod":
        obj = _pod(draw)
        if draw(st.booleans()):
            obj["metadata"]["deletionTimestamp"] = draw(SECONDS)
        return obj
    if kind == "Lease":
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "l", "creationTimestamp": draw(SECONDS)},
                "spec": {"holderIdentity": "x", "acquireTime": draw(MICROS), "renewTime": draw(MICROS)}}
    if kind == "Event":
        return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "R",
                "firstTimestamp": draw(SECONDS), "lastTimestamp": draw(SECONDS), "eventTime": draw(MICROS)}
    if kind == "events.k8s.io":
        return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
                "eventTime": draw(MICROS), "series": {"count": 2, "lastObservedTime": draw(MICROS)},
                "deprecatedFirstTimestamp": draw(SECONDS)}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "creationTimestamp": 0.0},
            "spec": {"replicas": 1},
            "status": {"conditions": [{"type": "Progressing", "lastTransitionTime": draw(SECONDS),
                                       "lastUpdateTime": draw(SECONDS)}]}}


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return [obj] if isinstance(obj, str) else []


@given(internal_objects())
def test_internal_objects_survive_the_wire_and_carry_no_float_time_on_it(obj: dict[str, Any]) -> None:
    wire = encode(obj)
    assert decode(wire) == obj
    assert decode(decode(wire)) == obj  # decoding is idempotent
    times = [s for s in _strings(wire) if s[:2] in ("19", "20", "21") and s.endswith("Z")]
    assert all(len(s) in (20, 27) for s in times)  # Time: seconds; MicroTime: six digits
    assert encode(decode(wire)) == wire


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)))
def test_canonical_wire_times_round_trip_exactly(moment: datetime) -> None:
    micro = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    whole = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert format_micro_time(parse_time(micro)) == micro
    assert format_time(parse_time(whole)) == whole
    assert format_time(parse_time(micro)) == whole  # Time drops the fraction, as upstream


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1970-01-01T00:00:00Z", 0.0), ("2026-11-23T19:48:06Z", 1795463286.0),
     ("2026-11-23T19:48:06.5Z", 1795463286.5), ("2026-11-23T20:48:06+01:00", 1795463286.0),
     ("2026-11-23t19:48:06.000001z", 1795463286.000001)],
)
def test_decode_accepts_whole_seconds_fractions_and_offsets(text: str, seconds: float) -> None:
    assert parse_time(text) == seconds


def test_a_time_that_does_not_parse_is_invalid_with_its_field_path() -> None:
    bad = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
           "spec": {"renewTime": "yesterday"}}
    with pytest.raises(Invalid) as err:
        decode(bad)
    assert [e.path for e in err.value.errors] == ["spec.renewTime"]
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
           "status": {"conditions": [{"type": "Ready"}, {"type": "X", "lastTransitionTime": "2026-13-01T00:00:00Z"}]}}
    with pytest.raises(Invalid) as err:
        decode(pod)
    assert [e.path for e in err.value.errors] == ["status.conditions[1].lastTransitionTime"]


def test_other_fields_and_the_input_are_left_alone() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "creationTimestamp": 1.0},
           "data": {"startTime": "1.5"}}
    wire = encode(obj)
    assert wire == {**obj, "metadata": {"name": "c", "creationTimestamp": "1970-01-01T00:00:01Z"}}
    assert obj["metadata"]["creationTimestamp"] == 1.0


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=25),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=12)


@given(st.sampled_from(["Pod", "Lease", "Event", "StatefulSet"]), JSON, JSON, JSON)
def test_decoding_any_body_either_works_or_names_the_bad_times(kind: str, meta: Any, spec: Any, status: Any) -> None:
    api_version = {"Lease": "coordination.k8s.io/v1", "StatefulSet": "apps/v1"}.get(kind, "v1")
    body = {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec, "status": status,
            "firstTimestamp": spec}
    try:
        decoded = decode(body)
    except Invalid as err:
        assert err.errors and all(e.rule == "must be an RFC 3339 time" for e in err.errors)
        return
    assert encode(decoded)["kind"] == kind
