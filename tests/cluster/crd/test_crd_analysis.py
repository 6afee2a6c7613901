"""The AnalysisTemplate and AnalysisRun CRDs (cluster/crd/analysis.py): their rules compile, they keep a valid
template whole, and they refuse, at the same field, what api/analysis_validation.py refuses."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from rollwise.api.validation_objects import validate_object
from rollwise.apiserver.admission.cel_rules import compile_errors
from rollwise.apiserver.admission.schema import admit_custom
from rollwise.cluster.crd.analysis import analysis_crds

TEMPLATE_CRD, RUN_CRD = analysis_crds()
TEMPLATE_SCHEMA = TEMPLATE_CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
RUN_SCHEMA = RUN_CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
TEMPLATE: dict[str, Any] = {
    "apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisTemplate", "metadata": {"name": "ok"},
    "spec": {"args": [{"name": "host"}],
             "metrics": [{"name": "ok", "interval": "5s", "count": 2, "failureLimit": 1, "initialDelay": 3,
                          "successCondition": "result == true",
                          "provider": {"web": {"url": "http://{{args.host}}/", "jsonPath": "{$.ok}",
                                               "headers": [{"key": "A", "value": "b"}], "timeoutSeconds": 5}}}]},
}


def _metric(**changes: Any) -> dict[str, Any]:
    template = copy.deepcopy(TEMPLATE)
    template["spec"]["metrics"][0].update(changes)
    return template


def test_every_rule_of_both_crds_compiles_and_names_match_argo() -> None:
    assert compile_errors(TEMPLATE_SCHEMA, "openAPIV3Schema") == []
    assert compile_errors(RUN_SCHEMA, "openAPIV3Schema") == []
    assert [c["spec"]["names"]["shortNames"] for c in (TEMPLATE_CRD, RUN_CRD)] == [["at"], ["ar"]]
    columns = [c["name"] for c in RUN_CRD["spec"]["versions"][0]["additionalPrinterColumns"]]
    assert columns == ["Status", "Age", "Message"]


def test_the_crd_keeps_a_valid_template_whole() -> None:
    stored, errors = admit_custom(TEMPLATE, None, TEMPLATE_SCHEMA)
    assert errors == [] and stored["spec"] == TEMPLATE["spec"]


@pytest.mark.parametrize(("template", "path"), [
    (_metric(provider={"web": {"url": "http://x"}, "prometheus": {"address": "a", "query": "q"}}),
     "spec.metrics[0].provider"),
    (_metric(provider={}), "spec.metrics[0].provider"),
    (_metric(interval=None, count=3), "spec.metrics[0].interval"),
    (_metric(failureLimit=4), "spec.metrics[0].count"),
    (_metric(interval="5 minutes"), "spec.metrics[0].interval"),
    (_metric(count=0), "spec.metrics[0].count"),
    (_metric(consecutiveErrorLimit=-1), "spec.metrics[0].consecutiveErrorLimit"),
    (_metric(provider={"web": {"timeoutSeconds": 3}}), "spec.metrics[0].provider.web.url"),
])
def test_the_crd_refuses_what_validation_refuses_at_the_same_field(template: dict[str, Any], path: str) -> None:
    metric = template["spec"]["metrics"][0]
    for key in [k for k, v in metric.items() if v is None]:
        del metric[key]
    assert path in [e.path for e in validate_object(template)]
    _, errors = admit_custom(template, None, TEMPLATE_SCHEMA)
    assert any(e.path.startswith(path) for e in errors), [str(e) for e in errors]


def test_a_run_needs_templates_or_metrics() -> None:
    run = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun", "metadata": {"name": "r"},
           "spec": {"args": [{"name": "host", "value": "x"}]}}
    _, errors = admit_custom(run, None, RUN_SCHEMA)
    assert [e.path for e in errors] == ["spec.templates"]
    _, errors = admit_custom({**run, "spec": {"templates": [{"templateName": "ok"}]}}, None, RUN_SCHEMA)
    assert errors == []
