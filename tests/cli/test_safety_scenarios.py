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


def test_quorum_aware_deletions_wait_min_ready_seconds_after_a_probe_tick(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = simulate(capsys, "etcd-min-ready-between-deletions.yaml")
    assert code == 0
    patched = next(e["t"] for e in result["events"] if e["type"] == "Step" and e["action"] == "patch")
    ready_at: dict[str, float] = {}
    for e in result["events"]:
        if e["t"] < patched:
            continue
        if e["type"] == "PodReady":
            ready_at[e["pod"]] = e["t"]
        elif e["type"] == "PodDeleteRequested":
            waited = {pod: e["t"] - t for pod, t in ready_at.items() if pod != e["pod"]}
            assert all(w > 10 for w in waited.values()), (e, waited)


def test_figures_are_measured_from_the_template_change_not_the_sample_before_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, result = simulate(capsys, "figures-start-at-the-template-change.yaml")
    assert code == 0
    assert result["summary"]["web"]["maxUnavailableObserved"] == 0


def test_summary_completes_at_ready_and_the_condition_at_available(capsys: pytest.CaptureFixture[str]) -> None:
    """spec/simulate.md: ``completed`` means Ready at the update revision; the controller's RolloutComplete
    condition means available (Ready for minReadySeconds), which the run also reaches."""
    code, result = simulate(capsys, "complete-means-available.yaml")
    assert code == 0
    web = result["summary"]["web"]
    ready = [e["t"] for e in result["events"] if e["type"] == "PodReady"][-1]
    patched = next(e["t"] for e in result["events"] if e["type"] == "Step" and e["action"] == "patch")
    assert web["rolloutSeconds"] == pytest.approx(ready - patched)
    conditions = result["final"]["statefulSets"][0]["status"]["conditions"]
    progressing = next(c for c in conditions if c["type"] == "Progressing")
    assert progressing["reason"] == "RolloutComplete"
