"""The CustomResourceDefinitions ``analysistemplates.apps.rollwise.dev`` and ``analysisruns.apps.rollwise.dev``
(Argo Rollouts' names, ``manifests/crds/analysis-*-crd.yaml``), built from ``api/analysis*.py``.

The schema keywords and CEL rules are the twins of ``api.analysis_validation``'s rules: exactly one provider,
``count`` at least the limits, an ``interval`` when ``count`` is above 1, unique metric and argument names,
durations as the steps write them. What CEL cannot say here (a condition that compiles, an argument a metric names
that the template declares) the validation says (``rollwise validate``) and the AnalysisRun controller checks again
when it resolves a run (phase Error, naming it). ``kubectl get analysisruns`` prints the phase and the message.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.analysis import ANALYSIS_GROUP, ANALYSIS_RUN, ANALYSIS_TEMPLATE, PHASES
from rollwise.api.analysis_validation import MAX_METRICS, PROVIDER_RULE
from rollwise.api.steps import DURATION_RULE
from rollwise.api.validation_cel import CelRule
from rollwise.cluster.crd.steps import DURATION_CEL

__all__ = ["ANALYSIS_PRINTER_COLUMNS", "analysis_crds", "metrics_schema"]

ANALYSIS_VERSION = "v1alpha1"
_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_MAX_ARGS = 64

ANALYSIS_PRINTER_COLUMNS: tuple[dict[str, Any], ...] = (
    {"name": "Status", "type": "string", "jsonPath": ".status.phase"},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    {"name": "Message", "type": "string", "jsonPath": ".status.message"},
)
"""``kubectl get ar``: NAME, STATUS (the phase), AGE and the message (Argo prints Status and Age)."""


def _rules(*rules: CelRule) -> dict[str, Any]:
    return {"x-kubernetes-validations": [r.as_schema() for r in rules]}


def _string(description: str, **extra: Any) -> dict[str, Any]:
    return {"description": description, "type": "string", **extra}


def _int(description: str, minimum: int) -> dict[str, Any]:
    return {"description": description, "type": "integer", "format": "int32", "minimum": minimum,
            "maximum": 2**31 - 1}


def _duration(description: str) -> dict[str, Any]:
    return {"description": description, "x-kubernetes-int-or-string": True, "maxLength": 16,
            "anyOf": [{"type": "integer"}, {"type": "string"}]} | _rules(CelRule(rule=DURATION_CEL,
                                                                                  message=DURATION_RULE))


def _unique(field: str, what: str) -> CelRule:
    return CelRule(rule=f"self.all(x, self.exists_one(y, y.{field} == x.{field}))",
                   message=f"{what} names must be unique", reason="FieldValueDuplicate")


def _args() -> dict[str, Any]:
    return {"description": "Arguments, by name: a metric's strings name them as {{args.NAME}}.", "type": "array",
            "maxItems": _MAX_ARGS, "items": {
                "description": "One argument; a template's value is the default a run's value replaces.",
                "type": "object", "required": ["name"],
                "properties": {"name": _string("The argument's name.", minLength=1, maxLength=253),
                               "value": _string("Its value.", maxLength=4096)}}} | _rules(_unique("name",
                                                                                                   "argument"))


def _provider() -> dict[str, Any]:
    header = {"description": "One request header.", "type": "object", "required": ["key", "value"],
              "properties": {"key": _string("The header's name.", minLength=1), "value": _string("Its value.")}}
    web = {"description": "GET a URL and read a JSON value from the answer (Argo's web provider).",
           "type": "object", "required": ["url"], "properties": {
               "url": _string("The URL (http or https); may name {{args.NAME}}.", minLength=1),
               "jsonPath": _string("Where the value is in the JSON answer, as Argo writes it: {$.data.ok}; "
                                   "absent: the whole answer."),
               "headers": {"description": "Request headers.", "type": "array", "maxItems": 32, "items": header},
               "timeoutSeconds": _int("Seconds the request may take (default 10).", 1)}}
    prometheus = {"description": "Run a PromQL instant query (Argo's prometheus provider).", "type": "object",
                  "required": ["address", "query"], "properties": {
                      "address": _string("The Prometheus server's base URL.", minLength=1),
                      "query": _string("The PromQL query; may name {{args.NAME}}.", minLength=1),
                      "timeout": _int("Seconds the query may take.", 1)}}
    one = " + ".join(f"(has(self.{key}) ? 1 : 0)" for key in ("web", "prometheus")) + " == 1"
    return {"description": "Where the value comes from: exactly one provider.", "type": "object",
            "properties": {"web": web, "prometheus": prometheus}} | _rules(CelRule(rule=one, message=PROVIDER_RULE))


def metrics_schema() -> dict[str, Any]:
    """``spec.metrics`` of both kinds."""
    metric = {"description": "One metric: how to measure it, how often, and what passes.", "type": "object",
              "required": ["name", "provider"], "properties": {
                  "name": _string("The metric's name, unique in the template.", minLength=1, maxLength=253),
                  "interval": _duration("Time between measurements (seconds, or 30s, 5m, 1h); absent: measured "
                                        "once."),
                  "count": _int("How many measurements to take (default 1).", 1),
                  "failureLimit": _int("Failed measurements allowed; one more fails the metric (default 0).", 0),
                  "inconclusiveLimit": _int("Inconclusive measurements allowed (default 0).", 0),
                  "consecutiveErrorLimit": _int("Measurements in a row that may err (default 4).", 0),
                  "initialDelay": _duration("Wait this long after the run starts before the first measurement."),
                  "successCondition": _string("A CEL expression over result: the measurement succeeds when true."),
                  "failureCondition": _string("A CEL expression over result: the measurement fails when true."),
                  "provider": _provider()}} | _rules(
        CelRule(rule="!has(self.count) || !has(self.failureLimit) || self.count >= self.failureLimit",
                message="must be greater than or equal to failureLimit", field_path=".count"),
        CelRule(rule="!has(self.count) || !has(self.inconclusiveLimit) || self.count >= self.inconclusiveLimit",
                message="must be greater than or equal to inconclusiveLimit", field_path=".count"),
        CelRule(rule="!has(self.count) || self.count <= 1 || has(self.interval)", reason="FieldValueRequired",
                message="an interval is required when count is greater than 1", field_path=".interval"))
    return {"description": "The metrics; the analysis succeeds when every one does.", "type": "array",
            "minItems": 1, "maxItems": MAX_METRICS, "items": metric} | _rules(_unique("name", "metric"))


def _status() -> dict[str, Any]:
    counts = {key: _int(text, 0) for key, text in (
        ("count", "Measurements that completed (errors not counted)."), ("successful", "Successful ones."),
        ("failed", "Failed ones."), ("inconclusive", "Inconclusive ones."), ("error", "Measurements that erred."),
        ("consecutiveError", "Errors in a row."))}
    measurement = {"description": "One measurement.", "type": "object", "properties": {
        "phase": _string("Successful, Failed, Inconclusive or Error."), "value": _string("The value measured."),
        "startedAt": _string("When it started.", format="date-time"),
        "finishedAt": _string("When it finished.", format="date-time"), "message": _string("Why, on an Error.")}}
    result = {"description": "A metric's results.", "type": "object", "properties": {
        "name": _string("The metric."), "phase": _string("The metric's phase."), **counts,
        "message": _string("The last measurement's message."),
        "measurements": {"description": "The last measurements (at most 10).", "type": "array",
                         "items": measurement}}}
    return {"description": "What the AnalysisRun controller measured.", "type": "object",
            "x-kubernetes-preserve-unknown-fields": True, "properties": {
                "phase": _string("The run's phase.", enum=list(PHASES)),
                "message": _string("When Failed or Error: the metric and its last value."),
                "startedAt": _string("When the run started.", format="date-time"),
                "metricResults": {"description": "Per metric.", "type": "array", "items": result}}}


def _crd(kind: str, plural: str, short: str, spec: dict[str, Any], *, status: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "apiVersion": _string(f"{ANALYSIS_GROUP}/{ANALYSIS_VERSION}."), "kind": _string(f"{kind}."),
        "metadata": {"description": "The object's name, namespace, labels and annotations.", "type": "object"},
        "spec": spec}
    version: dict[str, Any] = {"name": ANALYSIS_VERSION, "served": True, "storage": True}
    if status:
        properties["status"] = _status()
        version["subresources"] = {"status": {}}
        version["additionalPrinterColumns"] = [dict(c) for c in ANALYSIS_PRINTER_COLUMNS]
    else:
        version["additionalPrinterColumns"] = [{"name": "Age", "type": "date",
                                                "jsonPath": ".metadata.creationTimestamp"}]
    version["schema"] = {"openAPIV3Schema": {"description": f"Argo Rollouts' {kind}, for rollwise's canary steps.",
                                             "type": "object", "required": ["spec"], "properties": properties}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{ANALYSIS_GROUP}", "labels": {"app.kubernetes.io/name": "rollwise"}},
        "spec": {"group": ANALYSIS_GROUP, "scope": "Namespaced",
                 "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower(),
                           "shortNames": [short], "categories": ["rollwise"]},
                 "versions": [version]},
    }


def analysis_crds() -> list[dict[str, Any]]:
    """The AnalysisTemplate and AnalysisRun CRDs."""
    template_spec = {"description": "The metrics an analysis measures, and the arguments they take.",
                     "type": "object", "required": ["metrics"],
                     "properties": {"metrics": metrics_schema(), "args": _args()}}
    template_ref = {"description": "A reference to an AnalysisTemplate.", "type": "object",
                    "required": ["templateName"],
                    "properties": {"templateName": _string("An AnalysisTemplate in the run's namespace.",
                                                           minLength=1, maxLength=253, pattern=_SUBDOMAIN)}}
    run_spec = {"description": "What to measure: templates (resolved into metrics when the run starts) and "
                               "arguments.", "type": "object", "properties": {
                    "templates": {"description": "The AnalysisTemplates to run.", "type": "array", "maxItems": 16,
                                  "items": template_ref},
                    "metrics": metrics_schema(), "args": _args(),
                    "terminate": {"description": "Stop measuring: the run ends with what it has.",
                                  "type": "boolean"}}} | _rules(
        CelRule(rule="has(self.metrics) || (has(self.templates) && size(self.templates) > 0)",
                message="an AnalysisRun needs templates (or metrics) to run", reason="FieldValueRequired",
                field_path=".templates"))
    return [_crd(ANALYSIS_TEMPLATE, "analysistemplates", "at", template_spec, status=False),
            _crd(ANALYSIS_RUN, "analysisruns", "ar", run_spec, status=True)]
