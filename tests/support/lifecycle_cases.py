"""Validation cases for ``spec.lifecycle.preDelete`` (pre-delete hooks): the rows tests/api/test_validation.py adds to
its CREATE_CASES, which tests/cluster/crd/test_crd_rules.py replays through the CRD alone."""

from __future__ import annotations

from typing import Any

INVALID, REQUIRED, DUPLICATE = "Invalid value", "Required value", "Duplicate value"
PD = "spec.lifecycle.preDelete"


def _hook(**pre: Any) -> dict[str, Any]:
    return {"spec.lifecycle": {"preDelete": pre}}


LIFECYCLE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str]]]] = [
    ("pre-delete-hook", _hook(labelsHandler={"a.io/drain": "x"}, finalizersHandler=["a.io/drain"], timeoutSeconds=9),
     []),
    ("lifecycle-not-mapping", {"spec.lifecycle": 3}, [("spec.lifecycle", INVALID, "must be a mapping")]),
    ("pre-delete-not-mapping", {"spec.lifecycle": {"preDelete": []}}, [(PD, INVALID, "must be a mapping")]),
    ("pre-delete-names-nothing", _hook(timeoutSeconds=5), [(PD, REQUIRED, "at least one label")]),
    ("pre-delete-bad-label-value", _hook(labelsHandler={"d": "-x"}), [(f"{PD}.labelsHandler", INVALID, "alphanum")]),
    ("pre-delete-state-label", _hook(labelsHandler={"rollwise.dev/lifecycle-state": "x"}),
     [(f"{PD}.labelsHandler", INVALID, "own")]),
    ("pre-delete-finalizers-not-list", _hook(finalizersHandler="a/b"), [(f"{PD}.finalizersHandler", INVALID, "list")]),
    ("pre-delete-bad-finalizer", _hook(finalizersHandler=["a/-b"]), [(f"{PD}.finalizersHandler[0]", INVALID, "name")]),
    ("pre-delete-duplicate-finalizer", _hook(finalizersHandler=["a/b", "a/b"]),
     [(f"{PD}.finalizersHandler[1]", DUPLICATE, "unique")]),
    ("pre-delete-timeout-zero", _hook(labelsHandler={"a": "b"}, timeoutSeconds=0),
     [(f"{PD}.timeoutSeconds", INVALID, "greater than 0")]),
]
