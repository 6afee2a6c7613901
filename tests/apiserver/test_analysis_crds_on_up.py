"""The AnalysisTemplate and AnalysisRun kinds on `rollwise up`, driven by the real kubectl: served by their CRDs
(cluster/crd/analysis.py) with Argo's short names, `kubectl get ar` printing the phase and the message, and a bad
template refused with a Status naming the field."""

from __future__ import annotations

import json

import pytest
from kubectl_support import Up

pytestmark = [
    pytest.mark.kubectl,
    # the kinds alone: up's AnalysisRun controller off, so the status the test writes stays as written
    pytest.mark.up("--controllers=*,-analysis", shared=True),
]

TEMPLATE = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: AnalysisTemplate
metadata: {name: error-rate}
spec:
  args: [{name: host}]
  metrics:
  - name: error-rate
    interval: 5s
    count: 3
    failureLimit: 1
    successCondition: result < 0.05
    provider:
      web: {url: "http://{{args.host}}/rate", jsonPath: "{$.data.rate}"}
"""
RUN = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: AnalysisRun
metadata: {name: web-7cf995dbdb-2}
spec:
  templates: [{templateName: error-rate}]
  args: [{name: host, value: "127.0.0.1:1"}]
"""


def test_kubectl_applies_a_template_and_gets_templates_and_runs_by_short_name(up: Up) -> None:
    assert "analysistemplate.apps.rollwise.dev/error-rate created" in up.apply(TEMPLATE)
    up.kubectl("create", "-f", "-", stdin=RUN)
    up.kubectl("patch", "ar", "web-7cf995dbdb-2", "--subresource", "status", "--type", "merge", "-p",
               json.dumps({"status": {"phase": "Failed", "message": "metric error-rate failed: result 0.12"}}))
    out = up.kubectl("get", "at,ar").stdout.splitlines()
    assert any(line.startswith("analysistemplate.apps.rollwise.dev/error-rate") for line in out), out
    header = next(line for line in out if line.startswith("NAME") and "STATUS" in line)
    assert header.split()[:4] == ["NAME", "STATUS", "AGE", "MESSAGE"]
    row = next(line for line in out if line.startswith("analysisrun.apps.rollwise.dev/web-7cf995dbdb-2"))
    assert row.split()[1] == "Failed" and row.endswith("metric error-rate failed: result 0.12")


def test_a_template_with_two_providers_is_refused_with_a_status_naming_the_field(up: Up) -> None:
    bad = TEMPLATE.replace("name: error-rate}", "name: two}").replace(
        '      web: {url: "http://{{args.host}}/rate", jsonPath: "{$.data.rate}"}',
        '      web: {url: "http://{{args.host}}/rate"}\n      prometheus: {address: "http://p:9090", query: up}')
    result = up.kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert result.returncode != 0 and result.stdout == ""
    assert "spec.metrics[0].provider: Invalid value" in result.stderr
    assert "must have exactly one provider of web, prometheus" in result.stderr
    raw = up.kubectl("create", "--raw", "/apis/apps.rollwise.dev/v1alpha1/namespaces/default/analysistemplates",
                     "-f", "-", stdin=json.dumps({"apiVersion": "apps.rollwise.dev/v1alpha1",
                                                   "kind": "AnalysisTemplate", "metadata": {"name": "raw"},
                                                   "spec": {"metrics": [{"name": "m", "count": 2, "provider": {
                                                       "web": {"url": "http://x"}}}]}}), check=False)
    assert raw.returncode != 0
    assert "spec.metrics[0].interval: Required value" in raw.stderr
