"""Scenarios for the safer-rollout features (pause, PodDisruptionBudgets), run through ``rollwise simulate`` as a
user would. They live apart from the bundled scenarios (tests/scenarios), whose result documents are pinned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import main

SCENARIOS = Path(__file__).with_name("scenarios")


def simulate(capsys: pytest.CaptureFixture[str], name: str, *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["simulate", str(SCENARIOS / name), "--json", *extra])
    captured = capsys.readouterr()
    assert not captured.err or code == 1, captured.err
    return code, json.loads(captured.out)


def _deletions(result: dict[str, Any]) -> list[tuple[float, str]]:
    return [(e["t"], e["pod"]) for e in result["events"]
            if e["type"] == "PodDeleteRequested" and e["by"] == "statefulset-controller"]


def test_a_pause_mid_rollout_finishes_the_step_under_way_scales_and_resumes(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, result = simulate(capsys, "pause-mid-rollout.yaml")
    assert code == 0
    deletions = _deletions(result)
    assert [pod for _, pod in deletions] == ["web-2", "web-1", "web-0"]
    assert deletions[1][0] >= 670.0, "nothing is replaced while paused (paused at 10 s, resumed at 670 s)"
    created = {e["pod"]: e for e in result["events"] if e["type"] == "PodCreated"}
    assert created["web-3"]["t"] < 670.0, "the scale-up happened while paused"
    assert not [e for e in result["events"] if "ProgressDeadlineExceeded" in json.dumps(e)]
    assert result["summary"]["web"]["completed"] is True
