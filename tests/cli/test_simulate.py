"""``rollwise simulate`` and ``rollwise validate`` through the CLI entry point: the user contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCENARIOS = ROOT / "tests" / "scenarios"


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["simulate", *args, "--json"])
    captured = capsys.readouterr()
    run_json.last_err = captured.err  # type: ignore[attr-defined]
    return code, json.loads(captured.out)


def test_rolling_update_example_completes_one_pod_at_a_time_from_the_top(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = run_json(capsys, str(EXAMPLES / "rolling-update.yaml"))
    assert code == 0
    web = result["summary"]["web"]
    assert web["completed"] is True
    assert web["maxUnavailableObserved"] == 1
    assert web["podDeletions"] == 5
    deletions = [e["pod"] for e in result["events"] if e["type"] == "PodDeleteRequested"]
    assert deletions == ["web-4", "web-3", "web-2", "web-1", "web-0"]
    assert result["apiWrites"] > 0
    assert {p["name"] for p in result["final"]["pods"]} == {f"web-{i}" for i in range(5)}


def test_result_document_has_the_contract_fields(capsys: pytest.CaptureFixture[str]) -> None:
    _, result = run_json(capsys, str(EXAMPLES / "rolling-update.yaml"))
    assert set(result) >= {"scenario", "strategy", "endedAt", "events", "summary", "apiWrites", "metrics", "final"}
    assert set(result["summary"]["web"]) >= {
        "completed", "rolloutSeconds", "maxUnavailableObserved", "unavailablePodSeconds", "quorumLossSeconds",
        "leaderElections", "podCreations", "podDeletions", "forcedReplacements"}
    times = [e["t"] for e in result["events"]]
    assert times == sorted(times)
    steps = [e for e in result["events"] if e["type"] == "Step"]
    assert [s["index"] for s in steps] == [0, 1, 2]
    created = next(e for e in result["events"] if e["type"] == "PodCreated")
    assert {"pod", "ordinal", "revision"} <= set(created)


def test_stuck_image_stays_stuck_under_ordered_ready_even_after_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's known trap (#67250): the broken top pod is never Ready, so OrderedReady never replaces it."""
    code, result = run_json(capsys, str(EXAMPLES / "stuck-image-ordered-ready.yaml"))
    assert code == 0
    web = result["summary"]["web"]
    assert web["completed"] is False and web["rolloutSeconds"] is None
    waiting = {e["reason"] for e in result["events"] if e["type"] == "ContainerWaiting" and e["pod"] == "web-2"}
    assert "ImagePullBackOff" in waiting
    assert [e["pod"] for e in result["events"] if e["type"] == "PodDeleteRequested"] == ["web-2"]


def test_parallel_recovers_from_the_typo_once_the_template_is_fixed(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = run_json(capsys, str(SCENARIOS / "typo-fixed-parallel.yaml"))
    assert code == 0
    assert result["summary"]["web"]["completed"] is True


def test_scale_down_with_when_scaled_delete_removes_condemned_claims(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = run_json(capsys, str(SCENARIOS / "scale-and-retention.yaml"))
    assert code == 0
    deleted = [e["claim"] for e in result["events"] if e["type"] == "PVCDeleted"]
    assert sorted(deleted) == ["data-db-1", "data-db-2"]
    created = [e["claim"] for e in result["events"] if e["type"] == "PVCCreated"]
    assert sorted(created) == ["data-db-0", "data-db-1", "data-db-1", "data-db-2", "data-db-2"]


def test_strategy_override_changes_every_set(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = run_json(capsys, str(EXAMPLES / "rolling-update.yaml"), "--strategy", "OnDelete")
    assert code == 1  # the example expects 5 deletions; OnDelete makes none
    assert result["strategy"] == "OnDelete"
    assert result["summary"]["web"]["podDeletions"] == 0
    assert "expect failed: web.podDeletions: expected eq 5, got 0" in run_json.last_err  # type: ignore[attr-defined]


def test_failed_expectation_exits_1_and_names_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = (EXAMPLES / "rolling-update.yaml").read_text().replace("podDeletions: 5", "podDeletions: 4")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    code = main(["simulate", str(path)])
    err = capsys.readouterr().err
    assert code == 1
    assert "web.podDeletions: expected eq 4, got 5" in err


def test_max_unavailable_override_rolls_two_at_a_time(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = run_json(capsys, str(EXAMPLES / "rolling-update.yaml"), "--strategy",
                            "RollingUpdate:maxUnavailable=2")
    assert result["summary"]["web"]["maxUnavailableObserved"] == 2
    assert code == 1  # the example's expectation (le 1) no longer holds


def test_readable_output_names_the_set_and_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLES / "rolling-update.yaml")]) == 0
    out = capsys.readouterr().out
    assert "web-4 deletion requested" in out
    assert "Summary" in out and "web" in out


BAD = {
    "malformed.yaml": ("name: x\nobjects: [\n", "not valid YAML"),
    "unknown-strategy.yaml": (
        "objects:\n- apiVersion: apps/v1\n  kind: StatefulSet\n  metadata: {name: web}\n  spec:\n"
        "    selector: {matchLabels: {a: b}}\n    updateStrategy: {type: Sideways}\n"
        "    template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}\n",
        "objects[0].spec.updateStrategy.type"),
    "max-unavailable-zero.yaml": (
        "objects:\n- apiVersion: apps/v1\n  kind: StatefulSet\n  metadata: {name: web}\n  spec:\n"
        "    selector: {matchLabels: {a: b}}\n"
        "    updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0}}\n"
        "    template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}\n",
        "objects[0].spec.updateStrategy.rollingUpdate.maxUnavailable"),
    "selector-mismatch.yaml": (
        "objects:\n- apiVersion: apps/v1\n  kind: StatefulSet\n  metadata: {name: web}\n  spec:\n"
        "    selector: {matchLabels: {a: b}}\n"
        "    template: {metadata: {labels: {a: c}}, spec: {containers: [{name: c, image: i}]}}\n",
        "objects[0].spec.template.metadata.labels"),
    "bad-step.yaml": ("steps:\n- jump: 3\n", "steps[0].jump"),
    "bad-fault.yaml": ("steps:\n- podFault: {pod: web-0, fault: explode}\n", "steps[0].podFault.fault"),
    "bad-expect.yaml": ("expect:\n  web: {speed: 3}\n", "expect.web.speed"),
    "bad-kubelet.yaml": ("kubelet:\n  startSeconds: -1\n", "kubelet.startSeconds"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_invalid_scenario_exits_2_with_the_field_path_and_nothing_on_stdout(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, needle = BAD[name]
    path = tmp_path / name
    path.write_text(text)
    assert main(["simulate", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert str(path) in captured.err
    assert needle in captured.err


def test_unknown_strategy_override_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLES / "rolling-update.yaml"), "--strategy", "Sideways"]) == 2
    assert "--strategy" in capsys.readouterr().err


def test_validate_accepts_good_files_and_lists_every_problem_of_bad_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(EXAMPLES / "rolling-update.yaml")]) == 0
    manifest = tmp_path / "sts.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: Web}\nspec:\n  replicas: -1\n"
        "  selector: {matchLabels: {a: b}}\n"
        "  template: {metadata: {labels: {a: b}}, spec: {restartPolicy: Never, containers: [{name: c, image: i}]}}\n"
    )
    assert main(["validate", str(manifest)]) == 2
    err = capsys.readouterr().err
    for needle in ("metadata.name", "spec.replicas", "spec.template.spec.restartPolicy"):
        assert needle in err
