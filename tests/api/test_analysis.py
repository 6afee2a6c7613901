"""The AnalysisTemplate and AnalysisRun contract (api/analysis*.py): defaults, validation with field paths and
rules (Argo's ValidateMetrics plus CEL conditions), argument substitution, condition evaluation."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from rollwise.api.analysis import MissingArgument, metric_of, resolved_args, substitute_args, substituted_provider
from rollwise.api.analysis_cel import evaluate_condition
from rollwise.api.analysis_validation import check_analysis_spec
from rollwise.api.errors import FieldError
from rollwise.api.validation_objects import validate_object

TEMPLATE: dict[str, Any] = {
    "apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisTemplate", "metadata": {"name": "error-rate"},
    "spec": {"args": [{"name": "host"}, {"name": "path", "value": "rate"}],
             "metrics": [{"name": "error-rate", "interval": "5s", "count": 3, "failureLimit": 1,
                          "successCondition": "result < 0.05",
                          "provider": {"web": {"url": "http://{{args.host}}/{{ args.path }}",
                                               "jsonPath": "{$.data.rate}",
                                               "headers": [{"key": "X-Set", "value": "{{args.host}}"}]}}}]},
}


def _metric(**changes: Any) -> dict[str, Any]:
    template = copy.deepcopy(TEMPLATE)
    metric = template["spec"]["metrics"][0]
    for key, value in changes.items():
        if value is None:
            metric.pop(key, None)
        else:
            metric[key] = value
    return template


def _paths(errors: list[FieldError]) -> list[tuple[str, str]]:
    return [(e.path, e.rule) for e in errors]


def test_a_valid_template_has_no_errors_and_reads_with_argo_defaults() -> None:
    assert validate_object(TEMPLATE) == []
    metric = metric_of({"name": "m", "provider": {"web": {"url": "http://x"}}})
    assert (metric.interval, metric.count, metric.failure_limit, metric.inconclusive_limit,
            metric.consecutive_error_limit, metric.initial_delay, metric.provider) == (None, 1, 0, 0, 4, 0, "web")
    assert metric_of(TEMPLATE["spec"]["metrics"][0]).interval == 5


@pytest.mark.parametrize(("template", "path", "rule"), [
    (_metric(provider={"web": {"url": "http://x"}, "prometheus": {"address": "a", "query": "q"}}),
     "spec.metrics[0].provider", "must have exactly one provider of web, prometheus"),
    (_metric(provider={}), "spec.metrics[0].provider", "must have exactly one provider of web, prometheus"),
    (_metric(provider=None), "spec.metrics[0].provider", "must have exactly one provider of web, prometheus"),
    (_metric(interval=None), "spec.metrics[0].interval", "an interval is required when count is greater than 1"),
    (_metric(failureLimit=4), "spec.metrics[0].count", "must be greater than or equal to failureLimit (4)"),
    (_metric(interval="5 minutes"), "spec.metrics[0].interval",
     "must be a whole number of seconds, or a number with the unit s, m or h (30s, 5m, 1h)"),
    (_metric(consecutiveErrorLimit=-1), "spec.metrics[0].consecutiveErrorLimit",
     "must be greater than or equal to 0"),
    (_metric(count=0), "spec.metrics[0].count", "must be greater than 0"),
    (_metric(name=None), "spec.metrics[0].name", "a metric needs a name"),
    (_metric(provider={"web": {"jsonPath": "{$.ok}"}}), "spec.metrics[0].provider.web.url", "url is required"),
    (_metric(provider={"web": {"url": "http://x", "timeoutSeconds": 0}}),
     "spec.metrics[0].provider.web.timeoutSeconds", "must be greater than 0"),
    (_metric(provider={"web": {"url": "http://{{args.nope}}"}}), "spec.metrics[0].provider",
     "names argument 'nope', which spec.args does not declare"),
    (_metric(colour="red"), "spec.metrics[0].colour", "field not declared in schema"),
])
def test_a_bad_template_is_refused_with_the_field_path_and_the_rule(template: dict[str, Any], path: str,
                                                                    rule: str) -> None:
    assert (path, rule) in _paths(validate_object(template))


def test_a_condition_that_does_not_compile_is_refused_at_validation() -> None:
    errors = validate_object(_metric(failureCondition="result >"))
    assert [e.path for e in errors] == ["spec.metrics[0].failureCondition"]
    assert errors[0].rule.startswith("compilation failed:")


def test_metric_names_are_unique_and_a_template_needs_one() -> None:
    twice = copy.deepcopy(TEMPLATE)
    twice["spec"]["metrics"].append(copy.deepcopy(twice["spec"]["metrics"][0]))
    assert ("spec.metrics[1].name", "metric names must be unique") in _paths(validate_object(twice))
    empty = {**TEMPLATE, "spec": {"metrics": []}}
    assert ("spec.metrics", "at least one metric is required") in _paths(validate_object(empty))


def test_a_run_needs_templates_or_metrics_and_checks_the_template_names() -> None:
    run = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun", "metadata": {"name": "web-1-2"},
           "spec": {"templates": [{"templateName": "error-rate"}], "args": [{"name": "host", "value": "db"}]}}
    assert validate_object(run) == []
    assert ("spec.templates", "an AnalysisRun needs templates (or metrics) to run") in _paths(
        validate_object({**run, "spec": {}}))
    bad = {**run, "spec": {"templates": [{"templateName": "Error_Rate"}]}}
    assert [e.path for e in validate_object(bad)] == ["spec.templates[0].templateName"]


def test_arguments_are_substituted_the_run_s_value_over_the_template_s_default() -> None:
    args = resolved_args(TEMPLATE["spec"]["args"], [{"name": "host", "value": "db:8080"}])
    metric = metric_of(TEMPLATE["spec"]["metrics"][0])
    assert substituted_provider(metric, args) == {"web": {
        "url": "http://db:8080/rate", "jsonPath": "{$.data.rate}", "headers": [{"key": "X-Set", "value": "db:8080"}]}}
    with pytest.raises(MissingArgument, match="'host'"):
        substitute_args("http://{{args.host}}", resolved_args(TEMPLATE["spec"]["args"], None))


@pytest.mark.parametrize(("expression", "result", "expected"), [
    ("result < 0.05", 0.01, (True, None)),
    ("result < 0.05", 1, (False, None)),
    ("result[0] >= 0.95", [0.97], (True, None)),
    ("result.ok == true", {"ok": True}, (True, None)),
])
def test_conditions_are_cel_over_result(expression: str, result: Any, expected: tuple[Any, Any]) -> None:
    assert evaluate_condition(expression, result) == expected


def test_a_condition_that_cannot_be_evaluated_or_is_not_a_boolean_says_why() -> None:
    truth, why = evaluate_condition("result > 1", "abc")
    assert truth is None and why is not None and "result > 1" in why
    truth, why = evaluate_condition("result", 3.5)
    assert truth is None and why == "condition 'result' gave 3.5, not true or false"


def test_rollwise_validate_refuses_a_bad_template_with_exit_2_and_nothing_on_stdout(tmp_path: Path) -> None:
    path = tmp_path / "template.yaml"
    path.write_text(yaml.safe_dump(_metric(provider={"web": {"url": "http://x"}, "prometheus": {
        "address": "http://p", "query": "up"}})))
    done = subprocess.run([sys.executable, "-m", "rollwise", "validate", str(path)], capture_output=True, text=True,
                          check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert "spec.metrics[0].provider" in done.stderr and "exactly one provider" in done.stderr
    path.write_text(yaml.safe_dump(TEMPLATE))
    done = subprocess.run([sys.executable, "-m", "rollwise", "validate", str(path)], capture_output=True, text=True,
                          check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert "valid manifest" in done.stdout


def test_a_provider_field_of_the_wrong_type_is_refused_as_a_type_not_as_missing() -> None:
    template = {"metrics": [{"name": "x", "provider": {"web": {"url": 3}}}, {"name": "y", "provider": {}}]}
    errors = {str(e) for e in check_analysis_spec("AnalysisTemplate", template)}
    assert 'spec.metrics[0].provider.web.url: Invalid value: 3: must be a string' in errors
    assert any(e.startswith("spec.metrics[1].provider: Invalid value: {}:") for e in errors)
