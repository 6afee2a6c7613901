"""Scenarios for the safer-rollout features (pause, PodDisruptionBudgets), run through ``rollwise simulate`` as a
user would. They live under examples/safer, apart from the bundled scenarios, whose result documents are pinned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import main

SCENARIOS = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "examples" / "safer"


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


def test_a_disruption_budget_holds_a_rollout_and_a_scale_in_but_not_a_failed_pods_replacement(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, result = simulate(capsys, "pdb-holds-rollout.yaml")
    assert code == 0
    deletions = _deletions(result)
    rollout = [pod for t, pod in deletions if t < 28]
    assert rollout == ["web-4", "web-3", "web-2", "web-1", "web-0"]
    assert result["summary"]["web"]["maxUnavailableObserved"] == 1, "one at a time, not the set's own three"
    times = {pod: t for t, pod in deletions if t >= 28}
    assert times["web-4"] == 28.0, "the scale-in takes the one disruption the budget allows"
    assert times["web-0"] == 58.0, "a failed pod is replaced although the budget allows none"
    assert times["web-3"] == times["web-2"] == 88.0, "the rest of the scale-in waits for the budget to loosen"
    assert result["summary"]["web"]["completed"] is True


def test_a_budget_bounds_every_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    for strategy in ("RollingUpdate:maxUnavailable=3", "EnforcedRollingUpdate"):
        code, result = simulate(capsys, "pdb-holds-rollout.yaml", "--strategy", strategy)
        assert code == 0, strategy
        assert result["summary"]["web"]["maxUnavailableObserved"] == 1, strategy


def test_recreate_under_a_budget_deletes_what_it_allows_and_waits_for_the_rest(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Recreate creates nothing while an old pod is left and the budget lets one go: the rollout waits (and says
    why) until the budget is loosened, rather than take the set below it."""
    code, result = simulate(capsys, "pdb-holds-rollout.yaml", "--strategy", "Recreate")
    assert code == 1 and result["summary"]["web"]["completed"] is False
    before_loosening = [pod for t, pod in _deletions(result) if t < 600]
    assert before_loosening == ["web-0"]
    assert any(e["type"] == "WaitTimedOut" for e in result["events"])
