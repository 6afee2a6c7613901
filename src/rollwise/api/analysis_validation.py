"""Validation of AnalysisTemplate and AnalysisRun specs, each problem with its field path and rule.

The rules are Argo Rollouts' ``ValidateMetrics`` / ``ValidateMetric`` (``utils/analysis/helpers.go``): at least one
metric, unique names, exactly one provider, ``count`` at least ``failureLimit`` and ``inconclusiveLimit``, an
``interval`` when ``count`` is above 1, limits not negative; plus what rollwise's kinds add: durations as the step
durations are written (``api/steps.parse_duration``), conditions that compile (CEL, ``analysis_cel.py``), and
arguments a metric names that are declared. The CRD carries the same rules as schema keywords and CEL
(``cluster/crd/analysis.py``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.analysis import ANALYSIS_RUN, PROVIDERS, argument_names
from rollwise.api.analysis_cel import compile_error
from rollwise.api.errors import FieldError
from rollwise.api.steps import DURATION_RULE, parse_duration
from rollwise.api.validation_rules import check_dns_subdomain, check_int, type_error

__all__ = ["MAX_METRICS", "PROVIDER_RULE", "check_analysis_spec", "check_metrics"]

MAX_METRICS = 32
PROVIDER_RULE = f"must have exactly one provider of {', '.join(PROVIDERS)}"
_METRIC_FIELDS = ("name", "interval", "count", "failureLimit", "inconclusiveLimit", "consecutiveErrorLimit",
                  "initialDelay", "successCondition", "failureCondition", "provider")
_PROVIDER_FIELDS = {"web": ("url", "jsonPath", "headers", "timeoutSeconds"),
                    "prometheus": ("address", "query", "timeout")}
_REQUIRED = {"web": ("url",), "prometheus": ("address", "query")}


def _unknown(value: Mapping[str, Any], known: tuple[str, ...], path: str) -> list[FieldError]:
    return [FieldError(path=f"{path}.{key}" if path else str(key), kind="Unknown field", value=key,
                       rule="field not declared in schema") for key in value if key not in known]


def check_analysis_spec(kind: str, spec: object) -> list[FieldError]:
    """Every problem with an AnalysisTemplate's or an AnalysisRun's ``spec``."""
    if not isinstance(spec, Mapping):
        return [FieldError(path="spec", kind="Required value", rule="spec is required")] if spec is None \
            else [type_error("spec", spec, "a mapping")]
    if kind == ANALYSIS_RUN:
        errors = _unknown(spec, ("templates", "metrics", "args", "terminate"), "spec")
        errors += _check_templates(spec.get("templates"), "spec.templates")
        if spec.get("terminate") is not None and not isinstance(spec["terminate"], bool):
            errors.append(type_error("spec.terminate", spec["terminate"], "true or false"))
        if spec.get("metrics") is None and not spec.get("templates"):
            errors.append(FieldError(path="spec.templates", kind="Required value",
                                     rule="an AnalysisRun needs templates (or metrics) to run"))
        elif spec.get("metrics") is not None:
            errors += check_metrics(spec["metrics"], "spec.metrics")
    else:
        errors = _unknown(spec, ("metrics", "args"), "spec")
        errors += check_metrics(spec.get("metrics"), "spec.metrics")
        errors += _check_named_args(spec)
    errors += _check_args(spec.get("args"), "spec.args")
    return errors


def _check_named_args(spec: Mapping[str, Any]) -> list[FieldError]:
    """A template's metrics may name only the arguments it declares (Argo refuses the run otherwise)."""
    args = spec.get("args")
    declared = {a.get("name") for a in args if isinstance(a, Mapping)} if isinstance(args, list) else set()
    metrics = spec.get("metrics")
    errors: list[FieldError] = []
    for i, metric in enumerate(metrics if isinstance(metrics, list) else ()):
        if isinstance(metric, Mapping):
            errors += [FieldError(path=f"spec.metrics[{i}].provider", value=f"{{{{args.{name}}}}}",
                                  rule=f"names argument {name!r}, which spec.args does not declare")
                       for name in sorted(argument_names(metric.get("provider")) - declared)]
    return errors


def _check_templates(value: object, path: str) -> list[FieldError]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [type_error(path, value, "a list")]
    errors: list[FieldError] = []
    for i, ref in enumerate(value):
        if not isinstance(ref, Mapping):
            errors.append(type_error(f"{path}[{i}]", ref, "a mapping ({templateName: NAME})"))
            continue
        errors += _unknown(ref, ("templateName",), f"{path}[{i}]")
        if not ref.get("templateName"):
            errors.append(FieldError(path=f"{path}[{i}].templateName", kind="Required value",
                                     rule="the name of an AnalysisTemplate in the run's namespace is required"))
        else:
            errors += check_dns_subdomain(ref["templateName"], f"{path}[{i}].templateName")
    return errors


def _check_args(value: object, path: str) -> list[FieldError]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [type_error(path, value, "a list")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, arg in enumerate(value):
        at = f"{path}[{i}]"
        if not isinstance(arg, Mapping):
            errors.append(type_error(at, arg, "a mapping ({name, value})"))
            continue
        errors += _unknown(arg, ("name", "value"), at)
        name = arg.get("name")
        if not isinstance(name, str) or not name:
            errors.append(FieldError(path=f"{at}.name", kind="Required value", rule="an argument needs a name"))
        elif name in seen:
            errors.append(FieldError(path=f"{at}.name", kind="Duplicate value", value=name,
                                     rule="argument names must be unique"))
        else:
            seen.add(name)
        if arg.get("value") is not None and not isinstance(arg["value"], str):
            errors.append(type_error(f"{at}.value", arg["value"], "a string"))
    return errors


def check_metrics(value: object, path: str) -> list[FieldError]:
    """Every problem with a ``metrics`` list (Argo's ``ValidateMetrics``)."""
    if value is None or value == []:
        return [FieldError(path=path, kind="Required value", rule="at least one metric is required")]
    if not isinstance(value, list):
        return [type_error(path, value, "a list")]
    if len(value) > MAX_METRICS:
        return [FieldError(path=path, kind="Too many", rule=f"must have at most {MAX_METRICS} items")]
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, metric in enumerate(value):
        at = f"{path}[{i}]"
        if not isinstance(metric, Mapping):
            errors.append(type_error(at, metric, "a mapping"))
            continue
        name = metric.get("name")
        if isinstance(name, str) and name in names:
            errors.append(FieldError(path=f"{at}.name", kind="Duplicate value", value=name,
                                     rule="metric names must be unique"))
        elif isinstance(name, str):
            names.add(name)
        errors += _check_metric(metric, at)
    return errors


def _check_metric(metric: Mapping[str, Any], path: str) -> list[FieldError]:
    errors = _unknown(metric, _METRIC_FIELDS, path)
    name = metric.get("name")
    if not isinstance(name, str) or not name:
        errors.append(FieldError(path=f"{path}.name", kind="Required value", rule="a metric needs a name"))
    for key in ("interval", "initialDelay"):
        if metric.get(key) is not None and parse_duration(metric[key]) is None:
            errors.append(FieldError(path=f"{path}.{key}", value=metric[key], rule=DURATION_RULE))
    counts: dict[str, int] = {}
    for key in ("count", "failureLimit", "inconclusiveLimit", "consecutiveErrorLimit"):
        if metric.get(key) is not None:
            found = check_int(metric[key], f"{path}.{key}", minimum=1 if key == "count" else 0)
            errors += found
            if not found:
                counts[key] = metric[key]
    count = counts.get("count", 1)
    for key in ("failureLimit", "inconclusiveLimit"):
        if "count" in counts and key in counts and count < counts[key]:
            errors.append(FieldError(path=f"{path}.count", value=count,
                                     rule=f"must be greater than or equal to {key} ({counts[key]})"))
    if count > 1 and metric.get("interval") is None:
        errors.append(FieldError(path=f"{path}.interval", kind="Required value",
                                 rule="an interval is required when count is greater than 1"))
    for key in ("successCondition", "failureCondition"):
        errors += _check_condition(metric.get(key), f"{path}.{key}")
    errors += _check_provider(metric.get("provider"), f"{path}.provider")
    return errors


def _check_condition(value: object, path: str) -> list[FieldError]:
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        return [type_error(path, value, "a string (a CEL expression over result)")]
    error = compile_error(value)
    return [] if error is None else [FieldError(path=path, value=value, rule=f"compilation failed: {error}")]


def _check_provider(value: object, path: str) -> list[FieldError]:
    if not isinstance(value, Mapping):
        return [FieldError(path=path, kind="Required value", rule=PROVIDER_RULE)] if value is None \
            else [type_error(path, value, "a mapping")]
    errors = _unknown(value, PROVIDERS, path)
    chosen = [key for key in PROVIDERS if key in value]
    if len(chosen) != 1:
        return [*errors, FieldError(path=path, value=dict(value), rule=PROVIDER_RULE)]
    key = chosen[0]
    block = value[key]
    at = f"{path}.{key}"
    if not isinstance(block, Mapping):
        return [*errors, type_error(at, block, "a mapping")]
    errors += _unknown(block, _PROVIDER_FIELDS[key], at)
    for required in _REQUIRED[key]:
        if block.get(required) not in (None, "") and not isinstance(block[required], str):
            errors.append(type_error(f"{at}.{required}", block[required], "a string"))
        elif not block.get(required):
            errors.append(FieldError(path=f"{at}.{required}", kind="Required value", rule=f"{required} is required"))
    for text in ("jsonPath",) if key == "web" else ():
        if block.get(text) is not None and not isinstance(block[text], str):
            errors.append(type_error(f"{at}.{text}", block[text], "a string"))
    for seconds in ("timeoutSeconds", "timeout"):
        if block.get(seconds) is not None:
            errors += check_int(block[seconds], f"{at}.{seconds}", minimum=1)
    headers = block.get("headers")
    if headers is not None:
        if not isinstance(headers, list):
            errors.append(type_error(f"{at}.headers", headers, "a list of {key, value}"))
        else:
            for i, header in enumerate(headers):
                if not isinstance(header, Mapping) or not isinstance(header.get("key"), str) or not header["key"] \
                        or not isinstance(header.get("value"), str):
                    errors.append(FieldError(path=f"{at}.headers[{i}]", value=header,
                                             rule="a header needs a key and a value (strings)"))
    return errors
