"""The AnalysisRun controller's pure decisions (controllers/analysis/), table-driven over Argo Rollouts' rules
(analysis/analysis.go, utils/evaluate/evaluate.go): a measurement's phase, a metric's phase, the run's phase and
message, what is due when, the requeue, the templates resolved once, and nothing written on an unchanged world."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rollwise.api.analysis import Measured, metric_of
from rollwise.controllers.analysis import decide, next_reconcile, record
from rollwise.controllers.analysis.assess import measurement_phase, metric_phase, run_phase

T0 = 1_800_000_000.0
WEB = {"web": {"url": "http://{{args.host}}/rate", "jsonPath": "{$.rate}"}}


def _metric(**fields: Any) -> dict[str, Any]:
    return {"name": "error-rate", "provider": WEB, **fields}


def _run(*metrics: dict[str, Any], status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    run: dict[str, Any] = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
                           "metadata": {"name": "web-7cf995dbdb-2", "namespace": "default"},
                           "spec": {"metrics": list(metrics), "args": [{"name": "host", "value": "db"}], **spec}}
    if status is not None:
        run["status"] = status
    return run


def _with(run: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {**run, "status": status}


@pytest.mark.parametrize(("success", "failure", "value", "phase"), [
    (None, None, 1, "Successful"),
    ("result < 0.05", None, 0.01, "Successful"),
    ("result < 0.05", None, 0.12, "Failed"),
    (None, "result > 0.05", 0.12, "Failed"),
    (None, "result > 0.05", 0.01, "Successful"),
    ("result < 0.05", "result > 0.10", 0.01, "Successful"),
    ("result < 0.05", "result > 0.10", 0.12, "Failed"),
    ("result < 0.05", "result > 0.10", 0.07, "Inconclusive"),
    ("result < 0.05", "result > 0.01", 0.03, "Failed"),  # both hold: the failure wins, as Argo's does
    ("result < 0.05", None, "abc", "Error"),  # a condition that cannot be evaluated on the value
])
def test_a_measurement_s_phase_follows_argo_s_evaluate_result(success: str | None, failure: str | None, value: Any,
                                                               phase: str) -> None:
    metric = metric_of(_metric(successCondition=success, failureCondition=failure))
    assert measurement_phase(metric, Measured(value))[0] == phase


def test_a_provider_error_is_an_error_measurement_with_its_message() -> None:
    assert measurement_phase(metric_of(_metric()), Measured(error="connection refused")) == (
        "Error", "connection refused")


def _result(**counts: int) -> dict[str, Any]:
    return {"name": "error-rate", "phase": "Running", "measurements": [{"phase": "Successful"}], **counts}


@pytest.mark.parametrize(("metric", "result", "terminating", "phase"), [
    ({}, {"name": "error-rate"}, False, "Pending"),
    ({}, {"name": "error-rate"}, True, "Successful"),
    ({"count": 3, "interval": 5}, _result(count=1, successful=1), False, "Running"),
    ({"count": 3, "interval": 5}, _result(count=1, successful=1), True, "Successful"),
    ({"count": 3, "interval": 5}, _result(count=3, successful=3), False, "Successful"),
    ({"count": 3, "interval": 5}, _result(count=1, failed=1), False, "Failed"),
    ({"count": 3, "interval": 5, "failureLimit": 1}, _result(count=1, failed=1), False, "Running"),
    ({"count": 3, "interval": 5, "failureLimit": 1}, _result(count=3, failed=1, successful=2), False, "Successful"),
    ({"count": 3, "interval": 5, "failureLimit": 1}, _result(count=2, failed=2), False, "Failed"),
    ({"count": 3, "interval": 5}, _result(count=1, inconclusive=1), False, "Inconclusive"),
    ({"count": 3, "interval": 5, "inconclusiveLimit": 1}, _result(count=1, inconclusive=1), False, "Running"),
    ({}, _result(count=0, error=4, consecutiveError=4), False, "Running"),
    ({}, _result(count=0, error=5, consecutiveError=5), False, "Error"),
    ({"consecutiveErrorLimit": 0}, _result(count=0, error=1, consecutiveError=1), False, "Error"),
    ({"count": 3, "interval": 5}, {**_result(count=1, failed=1), "phase": "Successful"}, False, "Successful"),
])
def test_a_metric_s_phase_follows_argo_s_assess_metric_status(metric: dict[str, Any], result: dict[str, Any],
                                                              terminating: bool, phase: str) -> None:
    assert metric_phase(metric_of(_metric(**metric)), result, terminating=terminating) == phase


@pytest.mark.parametrize(("phases", "phase"), [
    ([], "Running"),
    (["Successful", "Running"], "Running"),
    (["Successful", "Pending"], "Running"),
    (["Successful", "Successful"], "Successful"),
    (["Successful", "Inconclusive"], "Inconclusive"),
    (["Inconclusive", "Error"], "Error"),
    (["Error", "Failed", "Successful"], "Failed"),
])
def test_the_run_s_phase_is_running_until_every_metric_completes_then_the_worst(phases: list[str],
                                                                                phase: str) -> None:
    assert run_phase(phases) == phase


def test_a_failing_measurement_fails_the_run_with_a_message_naming_the_metric_and_its_value() -> None:
    run = _run(_metric(failureCondition="result > 0.05"))
    plan = decide(run, {}, T0)
    assert [t.metric for t in plan.measure] == ["error-rate"]
    assert plan.measure[0].provider == {"web": {"url": "http://db/rate", "jsonPath": "{$.rate}"}}
    status = record(_with(run, plan.status or {}), "error-rate", Measured(0.12), T0 + 0.4)
    assert status["phase"] == "Failed"
    assert status["message"] == 'metric error-rate failed: result 0.12 matches failureCondition "result > 0.05"'
    (result,) = status["metricResults"]
    assert {k: result[k] for k in ("phase", "count", "failed", "successful", "error", "consecutiveError")} == {
        "phase": "Failed", "count": 1, "failed": 1, "successful": 0, "error": 0, "consecutiveError": 0}
    assert result["measurements"] == [{"phase": "Failed", "value": "0.12", "startedAt": T0, "finishedAt": T0,
                                       "message": 'result 0.12 matches failureCondition "result > 0.05"'}]
    done = decide(_with(run, status), {}, T0 + 60)
    assert (done.status, done.measure) == (None, ())
    assert next_reconcile(_with(run, status), T0 + 60) is None


def test_a_failed_metric_ends_the_others_and_the_run_is_failed_in_the_same_reconcile() -> None:
    slow = {"name": "latency", "provider": WEB, "interval": "30s", "count": 5}
    run = _run(_metric(successCondition="result < 0.05"), slow)
    status = (decide(run, {}, T0).status or {})
    status = record(_with(run, status), "latency", Measured(0.01), T0)
    status = record(_with(run, status), "error-rate", Measured(0.5), T0)
    assert [r["phase"] for r in status["metricResults"]] == ["Failed", "Successful"]
    assert status["phase"] == "Failed"
    assert decide(_with(run, status), {}, T0 + 30).measure == ()


def test_measurements_come_at_the_interval_until_the_count_and_the_requeue_says_when() -> None:
    run = _run(_metric(interval="10s", count=3, successCondition="result < 0.05"))
    status = decide(run, {}, T0).status or {}
    for i in range(3):
        now = T0 + 10 * i
        plan = decide(_with(run, status), {}, now)
        assert [t.metric for t in plan.measure] == ["error-rate"], i
        status = record(_with(run, plan.status or status), "error-rate", Measured(0.01), now)
        if i < 2:
            assert status["phase"] == "Running"
            assert next_reconcile(_with(run, status), now + 3) == 7.0
            assert decide(_with(run, status), {}, now + 9.5).measure == ()
    assert status["phase"] == "Successful" and "message" not in status
    assert [r["count"] for r in status["metricResults"]] == [3]


def test_an_initial_delay_holds_the_first_measurement_and_sets_the_requeue() -> None:
    run = _run(_metric(initialDelay="1m"))
    plan = decide(run, {}, T0)
    assert plan.measure == () and plan.status is not None and plan.status["phase"] == "Running"
    started = _with(run, plan.status)
    assert next_reconcile(started, T0 + 20) == 40.0
    assert decide(started, {}, T0 + 59).measure == ()
    assert [t.metric for t in decide(started, {}, T0 + 60).measure] == ["error-rate"]


def test_errors_are_retried_after_ten_seconds_and_the_fifth_in_a_row_errs_the_run() -> None:
    run = _run(_metric())
    status = decide(run, {}, T0).status or {}
    for i in range(5):
        now = T0 + 10 * i
        assert [t.metric for t in decide(_with(run, status), {}, now).measure] == ["error-rate"], i
        status = record(_with(run, status), "error-rate", Measured(error="connection refused"), now)
        if i < 4:
            assert status["phase"] == "Running" and next_reconcile(_with(run, status), now) == 10.0
    assert status["phase"] == "Error"
    assert status["message"] == "metric error-rate errored: connection refused"
    assert status["metricResults"][0]["count"] == 0 and status["metricResults"][0]["error"] == 5


def test_only_the_last_ten_measurements_are_kept_the_counts_keep_the_rest() -> None:
    run = _run(_metric(interval=1, count=12))
    status: dict[str, Any] = {}
    for i in range(12):
        status = record(_with(run, status), "error-rate", Measured(i), T0 + i)
    (result,) = status["metricResults"]
    assert result["count"] == 12 and len(result["measurements"]) == 10
    assert result["measurements"][0]["value"] == "2"


TEMPLATE = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisTemplate",
            "metadata": {"name": "error-rate", "namespace": "default"},
            "spec": {"args": [{"name": "host"}, {"name": "path", "value": "rate"}],
                     "metrics": [{"name": "error-rate", "successCondition": "result < 0.05",
                                  "provider": {"web": {"url": "http://{{args.host}}/{{args.path}}"}}}]}}


def _from_template(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
            "metadata": {"name": "web-7cf995dbdb-2", "namespace": "default"},
            "spec": {"templates": [{"templateName": "error-rate"}], "args": [{"name": "host", "value": "db"}],
                     **spec}}


def test_the_first_reconcile_resolves_the_templates_into_the_spec_once() -> None:
    run = _from_template()
    plan = decide(run, {"error-rate": TEMPLATE}, T0)
    assert plan.spec is not None and plan.status is None and plan.measure == ()
    assert plan.spec["metrics"] == TEMPLATE["spec"]["metrics"]
    assert plan.spec["args"] == [{"name": "host", "value": "db"}, {"name": "path", "value": "rate"}]
    resolved = {**run, "spec": plan.spec}
    edited = copy.deepcopy(TEMPLATE)
    edited["spec"]["metrics"][0]["successCondition"] = "result < 0.5"
    later = decide(resolved, {"error-rate": edited}, T0)
    assert later.spec is None
    assert later.measure[0].provider == {"web": {"url": "http://db/rate"}}


@pytest.mark.parametrize(("run", "templates", "message"), [
    (_from_template(), {}, 'AnalysisTemplate "error-rate" not found in the run\'s namespace'),
    (_from_template(args=[]), {"error-rate": TEMPLATE},
     "unable to resolve metric arguments: argument 'host' has no value (spec.args)"),
    (_run(_metric(successCondition="result >")), {}, "analysis spec invalid: spec.metrics[0].successCondition"),
])
def test_a_run_that_cannot_start_is_an_error_saying_why(run: dict[str, Any], templates: dict[str, Any],
                                                         message: str) -> None:
    plan = decide(run, templates, T0)
    assert plan.status is not None and plan.status["phase"] == "Error"
    assert plan.status["message"].startswith(message)
    assert plan.events and plan.events[0][:2] == ("Warning", "AnalysisRunError")
    assert decide(_with(run, plan.status), templates, T0 + 5) == type(plan)()


def test_a_reconcile_of_an_unchanged_world_writes_nothing() -> None:
    run = _run(_metric(interval="10s", count=3))
    first = decide(run, {}, T0 + 0.3)
    assert first.status is not None
    status = record(_with(run, first.status), "error-rate", Measured(0.01), T0 + 0.6)
    again = decide(_with(run, status), {}, T0 + 4.9)
    assert (again.status, again.measure, again.events) == (None, (), ())
    assert next_reconcile(_with(run, status), T0 + 4.9) == 6.0


def test_a_terminated_run_ends_successful_with_what_it_measured() -> None:
    run = _run(_metric(interval="10s", count=3))
    status = record(run, "error-rate", Measured(0.01), T0)
    plan = decide(_with({**run, "spec": {**run["spec"], "terminate": True}}, status), {}, T0 + 30)
    assert plan.measure == () and plan.status is not None and plan.status["phase"] == "Successful"
    assert plan.events == (("Normal", "AnalysisRunSuccessful", "analysis web-7cf995dbdb-2 completed Successful"),)
