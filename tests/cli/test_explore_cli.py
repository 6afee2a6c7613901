"""``rollwise explore``: the summary, the JSON document, replay files, and exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rollwise.cli import main

ROOT = Path(__file__).resolve().parents[2]
SET = {
    "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "podManagementPolicy": "Parallel",
             "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
             "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete", "whenDeleted": "Retain"},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
             "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                       "spec": {"accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "1Gi"}}}}]},
}
SMALL = ["--replicas", "2", "--faults", "0", "--user-actions", "0"]


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    path = tmp_path / "web.yaml"
    path.write_text(yaml.safe_dump(SET))
    return path


def test_a_clean_exploration_prints_a_summary_and_exits_0(manifest: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(manifest), *SMALL]) == 0
    out = capsys.readouterr().out
    assert "web (RollingUpdate, Parallel):" in out
    assert "exhaustive within bounds: no violations" in out


def test_json_counts_states_transitions_and_checks(manifest: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(manifest), *SMALL, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (entry,) = doc["sets"]
    assert entry["states"] > 10 and entry["transitions"] >= entry["states"] - 1 and entry["invariantChecks"] > 0
    assert entry["exhaustive"] is True and entry["violations"] == [] and doc["violations"] == 0
    assert set(entry["invariants"]) >= {"budget", "claims", "no-churn", "liveness", "recreate-never-mixes"}


def test_a_violation_exits_1_with_its_trace_and_replay(manifest: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    code = main(["explore", str(manifest), *SMALL, "--perturb", "stale,burst", "--json", "--out", str(out_dir)])
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    (violation,) = doc["sets"][0]["violations"]
    assert violation["invariant"] == "budget"
    assert violation["trace"][-1].startswith("statefulset-controller: reconciles on a stale view")
    assert violation["replayable"] is False and "stale view" in violation["notReplayableBecause"][0]
    assert main(["simulate", violation["replay"], "--json"]) == 0  # the scenario is valid, minus the stale view
    capsys.readouterr()


def test_the_summary_names_the_move_the_invariant_and_the_pods(manifest: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(manifest), *SMALL, "--perturb", "stale,burst"]) == 1
    out = capsys.readouterr().out
    assert "1 VIOLATION(S)" in out
    assert "budget: deleted available pod(s) web-0" in out
    assert "not replayable in the simulator: it needs a stale view" in out


def test_a_scenario_file_is_explored_from_its_objects(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explore", str(ROOT / "tests" / "scenarios" / "typo-fixed-parallel.yaml"), *SMALL,
                 "--strategy", "Recreate", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["sets"][0]["strategy"] == "Recreate"


@pytest.mark.parametrize(("args", "path"), [
    (["--perturb", "sideways"], "--perturb"),
    (["--replicas", "0"], "--replicas"),
    (["--strategy", "Sideways"], "--strategy"),
])
def test_invalid_flags_exit_2_with_the_flag_named(manifest: Path, args: list[str], path: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(manifest), *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert path in captured.err


def test_an_invalid_manifest_exits_2_with_the_field_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = {**SET, "spec": {**SET["spec"], "replicas": -1}}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    assert main(["explore", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "spec.replicas" in captured.err


def test_help_lists_what_it_accepts(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["explore", "--help"])
    out = capsys.readouterr().out
    for flag in ("--replicas", "--template-changes", "--faults", "--user-actions", "--perturb", "--strategy",
                 "--json", "--out", "--max-states"):
        assert flag in out
