"""``--strategy TYPE[:key=value,...]`` (scenario/strategy_override.py, spec/simulate.md): what an override writes
into each StatefulSet of a scenario, and every wrong option named against the flag with the field's own rule.
Through the commands: tests/cli/test_strategies.py and tests/cli/test_simulate.py."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.scenario.strategy_override import QUORUM_AWARE_ANNOTATION, parse_strategy


def _set(**annotations: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", **({"annotations": annotations} if annotations else {})},
            "spec": {"replicas": 3, "updateStrategy": {"type": "OnDelete"}}}


def _applied(text: str, obj: dict[str, Any]) -> dict[str, Any]:
    override, errors = parse_strategy(text)
    assert override is not None and errors == [], [str(e) for e in errors]
    return override.apply(obj)


def test_a_rolling_override_puts_its_options_in_the_types_own_block_and_drops_the_quorum_annotation() -> None:
    quorum = _set(**{QUORUM_AWARE_ANNOTATION: "QuorumAware", "team": "db"})
    out = _applied("EnforcedRollingUpdate:maxUnavailable=2,partition=1", quorum)
    assert out["spec"]["updateStrategy"] == {"type": "EnforcedRollingUpdate",
                                             "enforcedRollingUpdate": {"maxUnavailable": 2, "partition": 1}}
    assert out["metadata"]["annotations"] == {"team": "db"}
    assert quorum["metadata"]["annotations"][QUORUM_AWARE_ANNOTATION] == "QuorumAware", "the input is not changed"


def test_the_shorthands_write_what_they_stand_for() -> None:
    in_place = _applied("InPlace:maxUnavailable=50%", _set())
    assert in_place["spec"]["updateStrategy"] == {
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%", "podUpdatePolicy": "InPlaceIfPossible"}}
    quorum = _applied("QuorumAware:leaderTransfer=false", _set())
    assert quorum["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert quorum["metadata"]["annotations"] == {QUORUM_AWARE_ANNOTATION: "QuorumAware",
                                                 "rollwise.dev/leader-transfer": "false"}
    plain = _applied("OnDelete", _set(**{QUORUM_AWARE_ANNOTATION: "QuorumAware"}))
    assert "annotations" not in plain["metadata"]


def test_canary_keeps_the_files_steps_where_a_plain_rolling_update_drops_them() -> None:
    steps = [{"replicas": 1}, {"analysis": {"templates": [{"templateName": "error-rate"}]}}]
    canary = {**_set(), "spec": {"replicas": 3, "updateStrategy": {
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2, "steps": steps}}}}
    assert _applied("Canary:partition=1", canary)["spec"]["updateStrategy"] == {
        "type": "RollingUpdate", "rollingUpdate": {"partition": 1, "steps": steps}}
    assert _applied("RollingUpdate", canary)["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                                                           "rollingUpdate": {}}
    assert _applied("Canary", _set())["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {}}


@pytest.mark.parametrize(("text", "message"), [
    ("BlueGreen", '--strategy: Unsupported value: "BlueGreen": supported values: "RollingUpdate"'),
    ("OnDelete:partition=1", "--strategy: Invalid value: \"partition=1\": OnDelete takes no options"),
    ("RollingUpdate:surge=1", "options allowed for RollingUpdate: maxUnavailable, partition"),
    ("RollingUpdate:partition=-1", "partition must be an integer"),
    ("RollingUpdate:maxUnavailable=0", ": maxUnavailable must be greater than 0"),
    ("RollingUpdate:podUpdatePolicy=Sometimes", ': podUpdatePolicy supported values: "ReCreate"'),
    ("QuorumAware:leaderTransfer=yes", 'leaderTransfer must be "true" or "false"'),
], ids=["unknown-type", "options-on-ondelete", "unknown-key", "negative-partition", "zero-budget",
        "unknown-update-policy", "leader-transfer-not-a-boolean"])
def test_a_wrong_override_is_refused_naming_the_flag_the_option_and_the_rule(text: str, message: str) -> None:
    override, errors = parse_strategy(text)
    assert override is None and len(errors) == 1
    assert str(errors[0]).startswith("--strategy: ") and message in str(errors[0]), str(errors[0])


def test_every_wrong_option_of_one_override_is_reported_under_the_path_it_was_given() -> None:
    override, errors = parse_strategy("RollingUpdate:partition=x,surge=2,maxUnavailable=3", path="--strategies[1]")
    assert override is None
    assert [e.path for e in errors] == ["--strategies[1]", "--strategies[1]"]
    assert [e.value for e in errors] == ["partition=x", "surge=2"]
