"""Canary analysis in the simulator: a scenario replays each metric from recorded values (``analyses:``), the pure
AnalysisRun controller decides its phases, and the StatefulSet controller acts on them with the same decisions as on
a cluster. The bad image of examples/canary-bad-image.yaml is caught after one pod, where a plain rolling update
replaces every pod; a good image passes and the rest follow; every decision is judged by the invariants."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import zygote
from judged import judge_every_decision

from rollwise.api.errors import InvalidObject
from rollwise.cli.compare import run_comparison
from rollwise.scenario.strategy_override import parse_strategy
from rollwise.sim import Simulation, load_scenario, parse_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "examples" / "canary-bad-image.yaml"


def _raw() -> dict[str, Any]:
    import yaml
    return dict(yaml.safe_load(EXAMPLE.read_text()))


def _run(raw: dict[str, Any]) -> tuple[Simulation, dict[str, Any], list[str]]:
    sim = Simulation(parse_scenario(raw))
    problems = judge_every_decision(sim)
    return sim, sim.run(), problems


def _uids(result: dict[str, Any]) -> dict[str, str]:
    return {pod["name"]: pod["uid"] for pod in result["final"]["pods"]}


def test_the_bad_image_is_caught_after_one_pod_and_only_that_pod_goes_back() -> None:
    sim, result, problems = _run(_raw())
    assert problems == []
    deleted = [e["pod"] for e in result["events"] if e["type"] == "PodDeleteRequested"]
    assert deleted == ["web-3", "web-3"]  # to the canary revision, then back
    measured = [(e["value"], e["phase"]) for e in result["events"] if e["type"] == "AnalysisMeasured"]
    assert measured == [(0.02, "Successful"), (0.12, "Failed")]
    (status,) = [s["status"] for s in result["final"]["statefulSets"]]
    assert status["abort"] is True and "metric error-rate failed: result 0.12" in status["abortMessage"]
    assert {pod["revision"] for pod in result["final"]["pods"]} == {status["currentRevision"]}
    (run,) = sim.cluster.list("AnalysisRun.apps.rollwise.dev", "default")
    assert run["status"]["phase"] == "Failed"
    assert [m["value"] for m in run["status"]["metricResults"][0]["measurements"]] == ["0.02", "0.12"]


def test_compare_shows_the_canary_catching_what_a_plain_rolling_update_replaces_everywhere() -> None:
    scenario = load_scenario(EXAMPLE)
    overrides = [o for o, _ in (parse_strategy(text) for text in ("RollingUpdate", "Canary")) if o is not None]
    plain, canary = run_comparison(scenario, overrides)
    assert plain["summary"]["web"]["podDeletions"] == 4
    assert {pod["revision"] for pod in plain["final"]["pods"]} == {plain["final"]["statefulSets"][0]["status"][
        "updateRevision"]}
    assert canary["summary"]["web"]["podDeletions"] == 2
    assert canary["final"]["statefulSets"][0]["status"]["abort"] is True
    shown = zygote.run(["compare", str(EXAMPLE), "--strategies", "RollingUpdate,Canary"], env={"NO_COLOR": "1"},
                       timeout=120)
    assert shown.returncode == 0, shown.stderr
    rows = {line.split("│")[1].strip(): line for line in shown.stdout.splitlines() if line.startswith("│")}
    assert "update revision" in rows["RollingUpdate"] and "stable (aborted)" in rows["Canary"]


def test_a_good_image_passes_its_analysis_and_the_rest_follow() -> None:
    raw = _raw()
    raw["steps"][1]["patch"]["merge"]["spec"]["template"]["spec"]["containers"][0]["image"] = "app:v3"
    _, result, problems = _run(raw)
    assert problems == []
    measured = [e["value"] for e in result["events"] if e["type"] == "AnalysisMeasured"]
    assert measured == [0.01, 0.01, 0.01]  # count 3, the recorded default
    completed = [e for e in result["events"] if e["type"] == "AnalysisCompleted"]
    assert [e["phase"] for e in completed] == ["Successful"]
    deleted = [e["pod"] for e in result["events"] if e["type"] == "PodDeleteRequested"]
    assert deleted == ["web-3", "web-2", "web-1", "web-0"]
    first_after = next(e["t"] for e in result["events"] if e["type"] == "PodDeleteRequested" and e["pod"] == "web-2")
    assert first_after >= completed[0]["t"]  # nothing beyond the canary before the verdict
    (status,) = [s["status"] for s in result["final"]["statefulSets"]]
    assert status["currentRevision"] == status["updateRevision"] and "abort" not in status


def test_a_metric_with_no_recording_errors_and_aborts_naming_it() -> None:
    raw = _raw()
    raw["analyses"]["error-rate"]["metrics"] = {"latency": {"values": [1]}}
    _, result, problems = _run(raw)
    assert problems == []
    (status,) = [s["status"] for s in result["final"]["statefulSets"]]
    assert status["abort"] is True and "no recorded values for metric error-rate" in status["abortMessage"]


@pytest.mark.parametrize(("analyses", "path", "words"), [
    ({"missing": {"metrics": {"m": {"values": [1]}}}}, "analyses.missing", "no AnalysisTemplate of this name"),
    ({"error-rate": {"metrics": {"error-rate": {"values": []}}}}, "analyses.error-rate.metrics.error-rate.values",
     "non-empty list"),
    ({"error-rate": {"metrics": {"error-rate": {"values": [1], "every": 3}}}},
     "analyses.error-rate.metrics.error-rate.every", "unknown field"),
    ({"error-rate": {"metrics": {"error-rate": {"values": [{"error": ""}]}}}},
     "analyses.error-rate.metrics.error-rate.values[0].error", "error message"),
    ({"error-rate": {"metrics": {"error-rate": {"values": [1], "images": {"app:v2": "high"}}}}},
     "analyses.error-rate.metrics.error-rate.images[app:v2]", "non-empty list"),
    ([1], "analyses", "must be a mapping"),
])
def test_bad_recorded_analyses_are_refused_with_their_field_path(analyses: Any, path: str, words: str) -> None:
    raw = _raw()
    raw["analyses"] = analyses
    with pytest.raises(InvalidObject) as caught:
        parse_scenario(copy.deepcopy(raw))
    assert any(e.path == path and words in str(e) for e in caught.value.errors), caught.value.errors


def test_rollwise_simulate_refuses_a_bad_recording_with_exit_2_and_nothing_on_stdout(tmp_path: Path) -> None:
    raw = _raw()
    raw["analyses"]["error-rate"]["metrics"]["error-rate"]["values"] = "0.01"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    shown = zygote.run(["simulate", str(path)], env={"NO_COLOR": "1"}, timeout=60)
    assert shown.returncode == 2 and shown.stdout == ""
    assert "analyses.error-rate.metrics.error-rate.values" in shown.stderr


def test_seven_passed_canaries_leave_the_five_newest_runs_and_delete_each_older_one_once() -> None:
    raw = _raw()
    raw["steps"] = [{"waitFor": {"ready": "web", "timeout": 120}}]
    for version in range(3, 10):  # seven good images, each rolled out through a passing analysis
        image = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": f"app:v{version}"}]}}}}
        raw["steps"] += [{"patch": {"kind": "StatefulSet", "name": "web", "merge": image}}, {"after": 400}]
    sim, result, problems = _run(raw)
    assert problems == []
    assert [e["phase"] for e in result["events"] if e["type"] == "AnalysisCompleted"] == ["Successful"] * 7
    created = [e["message"].split()[2] for e in result["events"] if e.get("reason") == "AnalysisRunCreated"]
    deleted = [e["message"].split()[2] for e in result["events"] if e.get("reason") == "AnalysisRunDeleted"]
    assert len(created) == 7 and deleted == created[:2]
    kept = sim.cluster.list("AnalysisRun.apps.rollwise.dev", "default")
    assert sorted(r["metadata"]["name"] for r in kept) == sorted(created[2:])
    (status,) = [s["status"] for s in result["final"]["statefulSets"]]
    assert status["currentRevision"] == status["updateRevision"] == f"{created[-1].rsplit('-', 1)[0]}"
