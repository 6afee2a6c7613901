"""Regression scenarios for safety defects, run through ``rollwise simulate`` as a user would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import main

SCENARIOS = Path(__file__).resolve().parents[2] / "tests" / "scenarios"


def simulate(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, dict[str, Any]]:
    code = main(["simulate", str(SCENARIOS / name), "--json"])
    captured = capsys.readouterr()
    assert not captured.err or code == 1, captured.err
    return code, json.loads(captured.out)


def test_scale_down_reversed_while_terminating_keeps_the_claim(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = simulate(capsys, "scale-down-reversed-keeps-claims.yaml")
    assert code == 0
    assert [e for e in result["events"] if e["type"] == "PVCDeleted"] == []
    assert result["summary"]["db"]["claimsLost"] == 0


def test_pod_deleted_mid_rollout_without_a_rolling_update_block_is_not_churned(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """web-0 comes back at the current revision (upstream's rule without a rollingUpdate block); it is replaced
    once, after web-1, instead of being deleted again as soon as it is created."""
    code, result = simulate(capsys, "rolling-no-block-user-delete.yaml")
    assert code == 0
    by_controller = [e["pod"] for e in result["events"]
                     if e["type"] == "PodDeleteRequested" and e["by"] != "user"]
    assert by_controller == ["web-2", "web-1", "web-0"]
    assert result["summary"]["web"]["completed"] is True


def test_a_change_of_spelling_only_replaces_no_pod(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = simulate(capsys, "spelling-only-change.yaml")
    assert code == 0
    assert {e["revision"] for e in result["events"] if e["type"] == "PodCreated"} == {
        p["revision"] for p in result["final"]["pods"]}
    assert not [e for e in result["events"] if e["type"] == "PodDeleteRequested"]


@pytest.mark.parametrize("name", ["enforced-broken-below-healthy-parallel.yaml",
                                  "enforced-broken-below-healthy-orderedready.yaml",
                                  "enforced-fix-with-scale-up-ordered.yaml"])
def test_enforced_rolling_update_completes_once_the_template_is_fixed(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, result = simulate(capsys, name)
    assert code == 0
    assert result["summary"]["web"]["completed"] is True
    assert {p["revision"] for p in result["final"]["pods"]} == {result["final"]["statefulSets"][0]["status"][
        "updateRevision"]}
