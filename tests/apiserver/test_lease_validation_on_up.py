"""A Lease is held to kube-apiserver's rules where it is written (``ValidateLeaseSpec`` in
kubernetes ``pkg/apis/coordination/validation/validation.go``, and the typed decode before it): `up` reads every
Lease to see whether an operator leads (``local/standdown.py``), so a Lease with a mistyped or out-of-range field
is refused with a ``Status`` naming the field, never stored, and never reaches `up`'s controllers as a 500."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubectl_support import Up

pytestmark = pytest.mark.up(shared=True)


def _lease(name: str, **spec: object) -> str:
    return json.dumps({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": name, "annotations": {"rollwise.dev/controllers": "statefulset"}},
                       "spec": {"holderIdentity": "someone", **spec}})


@pytest.mark.parametrize(("spec", "field", "rule"), [
    ({"leaseDurationSeconds": "abc"}, "spec.leaseDurationSeconds", "must be an integer"),
    ({"leaseDurationSeconds": True}, "spec.leaseDurationSeconds", "must be an integer"),
    ({"leaseDurationSeconds": 1.5}, "spec.leaseDurationSeconds", "must be an integer"),
    ({"leaseDurationSeconds": 0}, "spec.leaseDurationSeconds", "must be greater than 0"),
    ({"leaseDurationSeconds": -5}, "spec.leaseDurationSeconds", "must be greater than 0"),
    ({"leaseDurationSeconds": 2**31}, "spec.leaseDurationSeconds", "must fit in a 32-bit signed integer"),
    ({"leaseTransitions": -1}, "spec.leaseTransitions", "must be greater than or equal to 0"),
    ({"holderIdentity": 5}, "spec.holderIdentity", "must be a string"),
], ids=["a string", "a boolean", "a fraction", "zero", "negative", "past int32", "negative transitions",
        "a number for a holder"])
def test_a_lease_with_a_mistyped_or_out_of_range_field_is_refused_naming_it(up: Up, spec: dict[str, object],
                                                                            field: str, rule: str) -> None:
    name = "bad-" + field.rsplit(".", 1)[-1].lower()
    result = up.kubectl("create", "-f", "-", stdin=_lease(name, **spec), check=False)
    assert result.returncode == 1 and result.stdout == "", result
    assert f"{field}: Invalid value" in result.stderr and rule in result.stderr, result.stderr
    assert "InternalError" not in result.stderr
    gone = up.kubectl("get", "lease", name, check=False)
    assert "NotFound" in gone.stderr, gone


def test_an_update_cannot_make_a_lease_invalid_either(up: Up) -> None:
    up.kubectl("create", "-f", "-", stdin=_lease("good", leaseDurationSeconds=15))
    result = up.kubectl("patch", "lease", "good", "--type=merge", "-p", '{"spec": {"leaseDurationSeconds": "x"}}',
                        check=False)
    assert result.returncode == 1 and "spec.leaseDurationSeconds" in result.stderr, result
    stored = json.loads(up.kubectl("get", "lease", "good", "-o", "json").stdout)
    assert stored["spec"]["leaseDurationSeconds"] == 15


def test_a_valid_lease_is_stored_as_sent(up: Up, tmp_path: Path) -> None:
    up.kubectl("create", "-f", "-", stdin=_lease("fine", leaseDurationSeconds=1, leaseTransitions=0))
    stored = json.loads(up.kubectl("get", "lease", "fine", "-o", "json").stdout)
    assert (stored["spec"]["leaseDurationSeconds"], stored["spec"]["leaseTransitions"]) == (1, 0)
