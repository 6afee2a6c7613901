"""The AnalysisRun controller run by the real operator (`rollwise run`) against `rollwise up`: an AnalysisRun
created by hand with `kubectl create -f` measures a local web server at its interval, records every measurement,
and ends Successful, or Failed with a message naming the metric and its value; up's own AnalysisRun controller
stands down while the operator leads, so every write of the runs is the operator's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up
from metric_server import Answer, MetricServer, metric_server
from operator_support import audit_entries, get_json, leading_operator

pytestmark = [pytest.mark.kubectl, pytest.mark.up(for_operator=True, rollwise=True)]

TEMPLATE = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: AnalysisTemplate
metadata: {{name: error-rate, namespace: default}}
spec:
  args: [{{name: base}}]
  metrics:
  - name: error-rate
    interval: 1s
    count: 3
    failureCondition: result > 0.05
    provider:
      web:
        url: "{{{{args.base}}}}/{path}"
        jsonPath: "{{$.data.rate}}"
        headers: [{{key: X-Analysis, value: "{{{{args.base}}}}"}}]
"""
RUN = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: AnalysisRun
metadata: {{name: {name}, namespace: default}}
spec:
  templates: [{{templateName: error-rate}}]
  args: [{{name: base, value: "{base}"}}]
"""


@pytest.fixture
def metrics() -> Iterator[MetricServer]:
    with metric_server() as server:
        yield server


def _finished(up: Up, name: str) -> dict[str, Any]:
    return get_json(up, "ar", name, check=False).get("status") or {}


def _run_to_the_end(up: Up, metrics: MetricServer, name: str, path: str) -> dict[str, Any]:
    up.apply(TEMPLATE.format(path=path))
    up.kubectl("create", "-f", "-", stdin=RUN.format(name=name, base=metrics.url("").rstrip("/")))
    up.until(lambda: _finished(up, name).get("phase") in ("Successful", "Failed", "Error", "Inconclusive"),
             f"the analysis {name} ends", on_fail=lambda: str(_finished(up, name)))
    return _finished(up, name)


def test_a_run_created_by_hand_measures_three_times_and_ends_successful(up: Up, tmp_path: Path,
                                                                        metrics: MetricServer) -> None:
    metrics.answers["/good"] = Answer({"data": {"rate": 0.01}})
    with leading_operator(up, tmp_path, "op-a"):
        status = _run_to_the_end(up, metrics, "good-run", "good")
    assert status["phase"] == "Successful" and "message" not in status
    (result,) = status["metricResults"]
    assert {k: result[k] for k in ("name", "phase", "count", "successful", "failed", "error")} == {
        "name": "error-rate", "phase": "Successful", "count": 3, "successful": 3, "failed": 0, "error": 0}
    assert [m["value"] for m in result["measurements"]] == ["0.01"] * 3
    assert all(m["phase"] == "Successful" and m["startedAt"].endswith("Z") for m in result["measurements"])
    assert len([p for p, _ in metrics.seen if p == "/good"]) == 3
    assert all(h["x-analysis"] == metrics.url("").rstrip("/") for p, h in metrics.seen)
    run = get_json(up, "ar", "good-run")
    assert [m["name"] for m in run["spec"]["metrics"]] == ["error-rate"], "the template resolved into the spec"
    row = up.kubectl("get", "ar", "good-run", "--no-headers").stdout.split()
    assert row[:2] == ["good-run", "Successful"]
    writes = [(e["user"], e["resource"]) for e in audit_entries(up) if e["resource"].startswith("analysisruns.")
              and e["verb"] in ("update", "patch") and e.get("name") == "good-run"]
    # the spec (templates resolved), then the status once at the start and after each of the three measurements
    assert writes == [("op-a", "analysisruns.apps.rollwise.dev")] + [
        ("op-a", "analysisruns.apps.rollwise.dev/status")] * 3, "up's AnalysisRun controller stood down"


def test_a_failing_metric_ends_the_run_failed_naming_the_metric_and_its_value(up: Up, tmp_path: Path,
                                                                             metrics: MetricServer) -> None:
    metrics.answers["/bad"] = Answer({"data": {"rate": 0.12}})
    with leading_operator(up, tmp_path, "op-a"):
        status = _run_to_the_end(up, metrics, "bad-run", "bad")
        up.until(lambda: "AnalysisRunFailed" in up.kubectl("get", "events").stdout, "the run's event is written")
        events = json.loads(up.kubectl("get", "events", "--field-selector", "involvedObject.name=bad-run", "-o",
                                       "json").stdout)["items"]
    assert status["phase"] == "Failed"
    assert status["message"] == 'metric error-rate failed: result 0.12 matches failureCondition "result > 0.05"'
    (result,) = status["metricResults"]
    assert (result["phase"], result["count"], result["failed"]) == ("Failed", 1, 1)
    assert [(m["phase"], m["value"]) for m in result["measurements"]] == [("Failed", "0.12")]
    assert [(e["type"], e["reason"]) for e in events] == [("Warning", "AnalysisRunFailed")]
    row = up.kubectl("get", "ar", "bad-run").stdout
    assert "metric error-rate failed: result 0.12" in row


def test_up_s_own_analysis_controller_runs_a_run_when_no_operator_leads(up: Up, metrics: MetricServer) -> None:
    metrics.answers["/flaky"] = Answer({"error": "down"}, status=503)
    up.apply(TEMPLATE.format(path="flaky").replace("count: 3", "count: 1").replace("    interval: 1s\n", ""))
    up.kubectl("create", "-f", "-", stdin=RUN.format(name="local-run", base=metrics.url("").rstrip("/")))
    up.until(lambda: (_finished(up, "local-run").get("metricResults") or [{}])[0].get("error") == 1,
             "the first measurement errs")
    metrics.answers["/flaky"] = Answer({"data": {"rate": 0.0}})
    up.until(lambda: _finished(up, "local-run").get("phase") == "Successful", "the retry succeeds",
             on_fail=lambda: str(_finished(up, "local-run")))
    (result,) = _finished(up, "local-run")["metricResults"]
    assert [m["phase"] for m in result["measurements"]] == ["Error", "Successful"]
    assert "received non 2xx response code: 503" in result["measurements"][0]["message"]
    assert (result["count"], result["error"], result["consecutiveError"]) == (1, 1, 0)
    writers = {e["user"] for e in audit_entries(up) if e["resource"].startswith("analysisruns.")
               and e["verb"] == "update" and e.get("name") == "local-run"}
    assert writers and "admin" not in writers


def test_an_operator_running_only_analysis_runs_a_run_with_its_metrics_inline(up: Up, tmp_path: Path,
                                                                             metrics: MetricServer) -> None:
    metrics.answers["/ok"] = Answer({"ok": True})
    inline = f"""\
apiVersion: apps.rollwise.dev/v1alpha1
kind: AnalysisRun
metadata: {{name: inline, namespace: default}}
spec:
  metrics:
  - name: ok
    successCondition: result == true
    provider: {{web: {{url: "{metrics.url('/ok')}", jsonPath: "{{$.ok}}"}}}}
"""
    with leading_operator(up, tmp_path, "op-a", "--controllers", "analysis"):
        up.kubectl("create", "-f", "-", stdin=inline)
        up.until(lambda: _finished(up, "inline").get("phase") == "Successful", "the inline run ends",
                 on_fail=lambda: str(_finished(up, "inline")))
    (result,) = _finished(up, "inline")["metricResults"]
    assert [(m["phase"], m["value"]) for m in result["measurements"]] == [("Successful", "true")]
