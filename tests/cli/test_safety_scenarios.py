"""Regression scenarios for safety defects, run through ``rollwise simulate`` as a user would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

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


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
@pytest.mark.parametrize("fault", ["crash", "kill", "fail", "unready"])
@pytest.mark.parametrize("order", ["fault-then-scale", "scale-then-fault"])
def test_a_fault_and_a_recover_at_one_instant_never_leave_a_pod_terminating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str, fault: str, order: str,
) -> None:
    """A fault and its recovery at one instant with a scale-down, in either order: every condemned pod is gone
    at the end (none left Terminating) and the set is complete."""
    doc = yaml.safe_load((SCENARIOS / "crash-and-recover-then-scale-down.yaml").read_text())
    doc["objects"][0]["spec"]["podManagementPolicy"] = policy
    fault_steps = [{"podFault": {"pod": "web-2", "fault": fault}}, {"podFault": {"pod": "web-2", "fault": "recover"}}]
    scale = [{"scale": {"name": "web", "replicas": 1}}]
    doc["steps"] = [doc["steps"][0], *(fault_steps + scale if order == "fault-then-scale" else scale + fault_steps),
                    {"after": 120}]
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(doc))
    code = main(["simulate", str(path), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [p["name"] for p in result["final"]["pods"]] == ["web-0"]
    assert result["summary"]["web"]["completed"] is True


def test_a_recovered_crash_does_not_swallow_the_termination_due_at_the_same_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The kubelet's cancelled back-off timer stayed on record and was taken for the termination timer due at the
    same instant: the pod stayed Terminating for ever."""
    code, result = simulate(capsys, "crash-recover-scale-to-zero-quorum.yaml")
    assert code == 0
    assert result["final"]["pods"] == []
    assert result["summary"]["etcd"]["completed"] is True
