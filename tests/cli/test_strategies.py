"""The seeds' stories through ``rollwise simulate``: stuck rollouts, the ways out, and faster rollouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def simulate(capsys: pytest.CaptureFixture[str], name: str, *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["simulate", str(EXAMPLES / name), "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def _progressing(result: dict[str, Any]) -> dict[str, Any]:
    conditions = result["final"]["statefulSets"][0]["status"]["conditions"]
    return next(c for c in conditions if c["type"] == "Progressing")


def test_rolling_update_stays_stuck_on_the_typo_and_the_deadline_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    _, result = simulate(capsys, "image-typo-fixed.yaml", "--strategy", "RollingUpdate")
    assert result["summary"]["web"]["completed"] is False
    progressing = _progressing(result)
    assert progressing["reason"] == "ProgressDeadlineExceeded"
    assert "web-3" in progressing["message"] and "ImagePullBackOff" in progressing["message"]


@pytest.mark.parametrize("strategy", ["Recreate", "EnforcedRollingUpdate"])
def test_recreate_and_enforced_recover_once_the_typo_is_fixed(capsys: pytest.CaptureFixture[str],
                                                              strategy: str) -> None:
    _, result = simulate(capsys, "image-typo-fixed.yaml", "--strategy", strategy)
    web = result["summary"]["web"]
    assert web["completed"] is True
    assert _progressing(result)["reason"] == ("RecreateComplete" if strategy == "Recreate" else "RolloutComplete")
    if strategy == "EnforcedRollingUpdate":
        assert web["forcedReplacements"] == 1
        assert web["maxUnavailableObserved"] == 1
        metrics = result["metrics"]
        assert metrics["statefulset_forced_pod_replacements_total"][0]["value"] == 1
        assert metrics["statefulset_enforced_rolling_updates_total"][0]["value"] >= 1
    else:
        assert web["maxUnavailableObserved"] == 4, "Recreate takes every pod down at once"
        reasons = [e["reason"] for e in result["events"] if e["type"] == "Event"]
        assert "RecreateStarted" in reasons and "RecreateComplete" in reasons


def test_max_unavailable_three_rolls_six_pods_in_two_waves(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = simulate(capsys, "max-unavailable-6.yaml")
    assert code == 0
    first_wave = [e["pod"] for e in result["events"] if e["type"] == "PodDeleteRequested"][:3]
    assert first_wave == ["web-5", "web-4", "web-3"]
    assert result["metrics"]["statefulset_max_unavailable"][0]["value"] == 3
    refused = main(["simulate", str(EXAMPLES / "max-unavailable-6.yaml"), "--json",
                    "--feature-gates", "MaxUnavailableStatefulSet=false"])
    captured = capsys.readouterr()
    assert refused == 2 and captured.out == ""
    assert "maxUnavailable: Forbidden: the MaxUnavailableStatefulSet feature gate is disabled" in captured.err
    one_at_a_time = main(["simulate", str(EXAMPLES / "max-unavailable-6.yaml"), "--json", "--strategy",
                          "RollingUpdate", "--feature-gates", "MaxUnavailableStatefulSet=false"])
    slow = json.loads(capsys.readouterr().out)
    assert one_at_a_time == 1, "the expect block (maxUnavailableObserved 3) fails one at a time"
    assert slow["summary"]["web"]["maxUnavailableObserved"] == 1
    assert slow["summary"]["web"]["rolloutSeconds"] > result["summary"]["web"]["rolloutSeconds"]


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_recreate_never_runs_old_and_new_pods_together(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                       policy: str) -> None:
    text = (EXAMPLES / "rolling-update.yaml").read_text().replace(
        "      replicas: 5\n", f"      replicas: 5\n      podManagementPolicy: {policy}\n")
    path = tmp_path / "recreate.yaml"
    path.write_text(text.replace("maxUnavailableObserved: {le: 1}, ", ""))
    assert main(["simulate", str(path), "--json", "--strategy", "Recreate"]) == 0
    result = json.loads(capsys.readouterr().out)
    live: dict[str, str] = {}
    for e in result["events"]:
        if e["type"] == "PodCreated":
            live[e["pod"]] = e["revision"]
            assert len(set(live.values())) == 1, f"old and new together at t={e['t']}: {live}"
        elif e["type"] == "PodGone":
            live.pop(e["pod"], None)
    created = [e["pod"] for e in result["events"] if e["type"] == "PodCreated" and e["t"] > 35]
    if policy == "OrderedReady":
        assert created == [f"web-{i}" for i in range(5)]
    assert result["summary"]["web"]["completed"] is True


def test_a_second_broken_template_under_enforced_updates_one_pod_and_stops(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, result = simulate(capsys, "enforced-second-broken-template.yaml")
    assert code == 0
    halts = [e for e in result["events"] if e["type"] == "Event" and e["reason"] == "SafetyHalt"]
    assert len(halts) == 2
    before_fix = [e for e in result["events"] if e["type"] == "PodDeleteRequested" and e["t"] < 248]
    assert {e["pod"] for e in before_fix} == {"web-3"}, "only the top pod is touched by broken templates"
    assert result["metrics"]["statefulset_safety_halt_total"][0]["value"] == 2


def test_feature_gates_flag_rejects_unknown_gates(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", str(EXAMPLES / "rolling-update.yaml"), "--feature-gates", "Nope=true"])
    assert code == 2
    assert "--feature-gates" in capsys.readouterr().err


def test_a_gated_off_strategy_is_rejected_by_validation_with_the_gate_named(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", str(EXAMPLES / "enforced-second-broken-template.yaml"), "--json",
                 "--feature-gates", "EnforcedRollingUpdateInStatefulSet=false"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "EnforcedRollingUpdateInStatefulSet" in captured.err
