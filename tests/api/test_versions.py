"""rollwise.api.versions: which release's API server takes which StatefulSet field, and the proposals a set uses."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.api.features import MAX_UNAVAILABLE, RECREATE
from rollwise.api.versions import DROPPED, UNKNOWN_FIELD, UNSUPPORTED_VALUE, parse_kube_version, proposal_uses


def _release(text: str, **gates: bool) -> Any:
    release, errors = parse_kube_version(text, gates)
    assert errors == []
    return release


@pytest.mark.parametrize(("version", "on"), [
    ("1.34", False), ("1.35", True), ("1.35.3", True), ("1.35.4", False), ("v1.36.2", False), ("1.37", True),
])
def test_max_unavailable_follows_kep_961s_flip_flop(version: str, on: bool) -> None:
    assert _release(version).on(MAX_UNAVAILABLE) is on


def test_recreate_is_a_gate_of_1_37_only_and_off_by_default() -> None:
    assert RECREATE not in _release("1.36").known_gates()
    assert not _release("1.37").on(RECREATE)
    assert _release("1.37", StatefulSetRecreateStrategy=True).strategy_types() == (
        "RollingUpdate", "OnDelete", "Recreate")
    _, errors = parse_kube_version("1.36", {RECREATE: True})
    assert [e.path for e in errors] == ["--feature-gates"] and "unrecognized feature gate" in errors[0].rule


def _set(strategy: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"spec": {"updateStrategy": strategy, **spec}}


def test_every_proposal_use_is_named_with_the_real_servers_answer() -> None:
    obj = _set({"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {},
                "rollingUpdate": {"podProgressTimeoutSeconds": 5, "maxUnavailable": 2}}, progressDeadlineSeconds=60,
               paused=True, lifecycle={"preDelete": {"labelsHandler": {"drain": "pending"}}})
    uses = {(u.path, u.answer) for u in proposal_uses(obj, None, _release("1.36"))}
    assert uses == {("spec.progressDeadlineSeconds", UNKNOWN_FIELD), ("spec.paused", UNKNOWN_FIELD),
                    ("spec.lifecycle", UNKNOWN_FIELD),
                    ("spec.updateStrategy.type", UNSUPPORTED_VALUE),
                    ("spec.updateStrategy.enforcedRollingUpdate", UNKNOWN_FIELD),
                    ("spec.updateStrategy.rollingUpdate.podProgressTimeoutSeconds", UNKNOWN_FIELD),
                    ("spec.updateStrategy.rollingUpdate.maxUnavailable", DROPPED)}
    assert {u.path for u in proposal_uses(obj, None, _release("1.37"))} == uses_paths_without_max_unavailable(uses)


def uses_paths_without_max_unavailable(uses: set[tuple[str, str]]) -> set[str]:
    return {path for path, _ in uses if not path.endswith("maxUnavailable")}


def test_a_gated_value_already_stored_is_no_new_use() -> None:
    stored = _set({"type": "Recreate", "rollingUpdate": {"maxUnavailable": 2}})
    assert proposal_uses(stored, stored, _release("1.36")) == []
    assert [u.path for u in proposal_uses(stored, None, _release("1.36"))] == [
        "spec.updateStrategy.type", "spec.updateStrategy.rollingUpdate.maxUnavailable"]
