"""Member Lease holderIdentity (reference §1.4): both formats, unknown roles, malformed values, deterministic ids."""

from __future__ import annotations

import re

import pytest

from rollwise.api.leases import (
    LEADER,
    MEMBER,
    Holder,
    HolderError,
    cluster_id,
    format_holder,
    lease_role,
    member_id,
    parse_holder,
)


@pytest.mark.parametrize(
    ("identity", "expected"),
    [
        ("ba8895804678cd95:ef6d69d248212693:Leader", Holder(member_id="ba8895804678cd95",
                                                            cluster_id="ef6d69d248212693", role=LEADER)),
        ("ba8895804678cd95:ef6d69d248212693:Member", Holder(member_id="ba8895804678cd95",
                                                            cluster_id="ef6d69d248212693", role=MEMBER)),
        ("c933cabef32f1bc2:Leader", Holder(member_id="c933cabef32f1bc2", cluster_id=None, role=LEADER)),
        ("c933cabef32f1bc2:Member", Holder(member_id="c933cabef32f1bc2", cluster_id=None, role=MEMBER)),
        ("c933cabef32f1bc2:ef6d69d248212693:Learner", Holder(member_id="c933cabef32f1bc2",
                                                             cluster_id="ef6d69d248212693", role=None)),
        ("c933cabef32f1bc2:leader", Holder(member_id="c933cabef32f1bc2", cluster_id=None, role=None)),
        ("c933cabef32f1bc2:", Holder(member_id="c933cabef32f1bc2", cluster_id=None, role=None)),
    ],
    ids=["three-part-leader", "three-part-member", "two-part-leader", "two-part-member", "unknown-role-learner",
         "role-is-case-sensitive", "empty-role-is-unknown"],
)
def test_holder_identity_parses_both_formats_and_unknown_roles_become_none(identity: str, expected: Holder) -> None:
    assert parse_holder(identity) == expected


@pytest.mark.parametrize(
    "identity",
    ["", "ba8895804678cd95", "a:b:c:Leader", ":Leader", "a::Leader", None, 42],
    ids=["empty", "one-part", "four-parts", "empty-member-id", "empty-cluster-id", "missing", "not-a-string"],
)
def test_malformed_holder_identity_is_an_error_value_not_an_exception(identity: object) -> None:
    parsed = parse_holder(identity)
    assert isinstance(parsed, HolderError)
    assert "holderIdentity" in str(parsed)


def _lease(spec: dict[str, object] | None) -> dict[str, object]:
    out: dict[str, object] = {"metadata": {"name": "etcd-0"}}
    if spec is not None:
        out["spec"] = spec
    return out


@pytest.mark.parametrize(
    ("lease", "expected"),
    [
        (None, None),
        (_lease({"holderIdentity": "aa:bb:Leader"}), LEADER),
        (_lease({"holderIdentity": "aa:Member"}), MEMBER),
        (_lease({"holderIdentity": "aa:bb:Candidate"}), None),
    ],
    ids=["missing-lease-is-no-role", "leader", "member", "unknown-role"],
)
def test_lease_role_reads_the_role_or_none(lease: dict[str, object] | None, expected: str | None) -> None:
    assert lease_role(lease) == expected


@pytest.mark.parametrize(
    "lease",
    [_lease(None), _lease({}), _lease({"holderIdentity": "a:b:c:d"})],
    ids=["no-spec", "no-holder", "malformed"],
)
def test_lease_role_of_an_unparseable_lease_is_the_error(lease: dict[str, object]) -> None:
    assert isinstance(lease_role(lease), HolderError)


@pytest.mark.parametrize(
    ("cluster", "role", "expected"),
    [("ef6d69d248212693", LEADER, "ba8895804678cd95:ef6d69d248212693:Leader"),
     (None, MEMBER, "ba8895804678cd95:Member"),
     ("", MEMBER, "ba8895804678cd95:Member")],
    ids=["three-part", "two-part-without-cluster", "two-part-with-empty-cluster"],
)
def test_format_holder_writes_what_parse_holder_reads(cluster: str | None, role: str, expected: str) -> None:
    text = format_holder("ba8895804678cd95", cluster, role)
    assert text == expected
    assert parse_holder(text) == Holder(member_id="ba8895804678cd95", cluster_id=cluster or None, role=role)


def test_member_id_is_fnv1a_64_of_the_name_in_sixteen_lower_hex_digits() -> None:
    assert member_id("a") == "af63dc4c8601ec8c"  # the published FNV-1a 64 test vector
    assert member_id("foobar") == "85944171f73967e8"
    ids = [member_id(f"etcd-{i}") for i in range(200)]
    assert all(re.fullmatch(r"[0-9a-f]{16}", x) for x in ids)
    assert member_id("p0") == "08d59807b575ec6d"  # zero-padded to 16 digits, unlike etcd's own hex ids
    assert len(set(ids)) == len(ids)
    assert member_id("etcd-0") == member_id("etcd-0")


def test_cluster_id_is_deterministic_and_differs_per_set() -> None:
    assert re.fullmatch(r"[0-9a-f]{16}", cluster_id("etcd"))
    assert cluster_id("etcd") == cluster_id("etcd") != cluster_id("etcd-events")
