"""Sets of one name in different namespaces are separate rows: the summary, ``expect:`` and the tables key them
``namespace/name``, and keep the plain name for every set whose name is used once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollwise.cli import main

SET = """
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {{name: {name}, namespace: {namespace}}}
    spec:
      replicas: {replicas}
      serviceName: {name}
      selector: {{matchLabels: {{app: {name}}}}}
      template:
        metadata: {{labels: {{app: {name}}}}}
        spec: {{containers: [{{name: app, image: "app:v1"}}]}}
      volumeClaimTemplates:
        - metadata: {{name: data}}
          spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
"""
ROLL_B = """
steps:
  - waitFor: {ready: web, namespace: b, timeout: 300}
  - patch: {kind: StatefulSet, name: web, namespace: b, merge: {spec: {template: {spec: {containers: [{name: app,
            image: "app:v2"}]}}}}}
  - waitFor: {rolloutComplete: web, namespace: b, timeout: 300}
"""


def _scenario(tmp_path: Path, expect: str) -> Path:
    objects = (SET.format(name="web", namespace="a", replicas=2) + SET.format(name="web", namespace="b", replicas=4)
               + SET.format(name="db", namespace="a", replicas=1))
    path = tmp_path / "two.yaml"
    path.write_text("name: two-webs\nkubelet: {startSeconds: 2, readySeconds: 1, terminationSeconds: 1}\n"
                    f"objects:{objects}{ROLL_B}{expect}")
    return path


def test_two_sets_of_one_name_get_a_summary_row_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, "expect:\n  b/web: {completed: true, podDeletions: 4}\n  a/web: {podDeletions: 0}\n"
                               "  db: {completed: true}\n")
    assert main(["simulate", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    summary = result["summary"]
    assert sorted(summary) == ["a/web", "b/web", "db"]
    assert (summary["a/web"]["podCreations"], summary["b/web"]["podCreations"]) == (2, 4)
    assert (summary["a/web"]["podDeletions"], summary["b/web"]["podDeletions"]) == (0, 4)
    assert sorted(s["name"] for s in result["final"]["statefulSets"]) == ["a/web", "b/web", "db"]
    assert sorted(result["samples"]) == ["a/web", "b/web", "db"]
    # Each pod and claim of the shared name is named with its namespace in the events, as the final pods are.
    created = {e["pod"] for e in result["events"] if e["type"] == "PodCreated"}
    assert {"a/web-0", "a/web-1", "b/web-3", "db-0"} <= created and "web-0" not in created
    claims = {e["claim"] for e in result["events"] if e["type"] == "PVCCreated"}
    assert {"a/data-web-0", "b/data-web-3", "data-db-0"} <= claims
    assert {"a/web-1", "b/web-3"} <= {p["name"] for p in result["final"]["pods"]}


def test_the_tables_show_a_row_per_namespace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _scenario(tmp_path, "")
    assert main(["simulate", str(path)]) == 0
    out = capsys.readouterr().out
    rows = [line.split()[1] for line in out.splitlines() if line.startswith("│")]
    assert rows == ["a/web", "b/web", "db"]
    assert main(["compare", str(path), "--strategies", "RollingUpdate,Recreate"]) == 0
    out = capsys.readouterr().out
    assert "a/web" in out and "b/web" in out


def test_an_expectation_on_one_namespace_s_set_is_judged_on_that_set(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # a/web never rolls, so an expectation that it deleted pods fails (exit 1), naming the set as keyed.
    path = _scenario(tmp_path, "expect:\n  a/web: {podDeletions: {ge: 1}}\n")
    assert main(["simulate", str(path)]) == 1
    assert "a/web" in capsys.readouterr().err


def test_plan_names_each_set_as_the_summary_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(_scenario(tmp_path, "")), "--at", "16"]) == 0
    heads = [line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith("StatefulSet ")]
    assert sorted(heads) == ["a/web", "b/web", "db"]
