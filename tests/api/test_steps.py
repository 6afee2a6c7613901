"""Canary steps' contract (api/steps.py): each step exactly one of replicas, pause, analysis, with field paths; the
count a step asks for; what promote writes."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from rollwise.api.defaults import apply_defaults
from rollwise.api.features import FeatureGates
from rollwise.api.steps import NothingToPromote, parse_duration, promoted_status, target_replicas
from rollwise.api.validation import structural_errors, validate_statefulset
from rollwise.apiserver.admission.schema import admit_custom
from rollwise.cluster.crd.statefulset import crd

SET: dict[str, Any] = {
    "apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "metadata": {"name": "web"},
    "spec": {"replicas": 4, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
             "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"steps": []}},
             "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}},
}


def _with(steps: Any) -> dict[str, Any]:
    sts = copy.deepcopy(SET)
    sts["spec"]["updateStrategy"]["rollingUpdate"]["steps"] = steps
    return apply_defaults(sts, gates=FeatureGates())


def _errors(steps: Any) -> list[str]:
    return [str(e) for e in structural_errors(_with(steps))]


VALID: list[Any] = [
    [{"replicas": 1}, {"pause": {}}],
    [{"replicas": "25%"}, {"pause": {"duration": 30}}, {"replicas": "100%"}, {"pause": {"duration": "5m"}}],
    [{"replicas": 0}, {"pause": {"duration": "1h"}}, {"analysis": {"templates": [{"templateName": "error-rate"}],
                                                                   "args": [{"name": "x", "value": "1"}]}}],
]
INVALID: list[Any] = [
    ([{"replicas": 1, "pause": {}}], "steps[0]", "exactly one of replicas, pause, analysis"),
    ([{}], "steps[0]", "exactly one of"),
    ([{"replicas": -1}], "steps[0].replicas", "at least 0"),
    ([{"replicas": "101%"}], "steps[0].replicas", "'0%' to '100%'"),
    ([{"replicas": "half"}], "steps[0].replicas", "percentage"),
    ([{"pause": {"duration": "5x"}}], "steps[0].pause.duration", "30s, 5m, 1h"),
    ([{"pause": {"duration": -3}}], "steps[0].pause.duration", "whole number of seconds"),
    ([{"pause": 30}], "steps[0].pause", "a mapping"),
    ([{"analysis": {}}], "steps[0].analysis.templates", "Required value"),
    ([{"analysis": {"templates": [{"templateName": "Bad_Name"}]}}], "steps[0].analysis.templates[0].templateName",
     "RFC 1123"),
    ("1", "steps", "a list"),
]


@pytest.mark.parametrize("steps", VALID)
def test_valid_steps_are_accepted(steps: Any) -> None:
    assert _errors(steps) == []
    assert validate_statefulset(_with(steps), gates=FeatureGates()) == []


@pytest.mark.parametrize(("steps", "path", "words"), INVALID)
def test_invalid_steps_name_the_field_and_the_rule(steps: Any, path: str, words: str) -> None:
    errors = _errors(steps)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"spec.updateStrategy.rollingUpdate.{path}:") and words in errors[0]


def test_rollwise_validate_exits_2_with_the_path_and_nothing_on_stdout(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    path.write_text(yaml.safe_dump(_with([{"replicas": 1}, {"pause": {"duration": "soon"}}])))
    done = subprocess.run([sys.executable, "-m", "rollwise", "validate", str(path)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "spec.updateStrategy.rollingUpdate.steps[1].pause.duration" in done.stderr


@pytest.mark.parametrize(("value", "replicas", "count"), [
    (1, 4, 1), ("25%", 4, 1), ("30%", 4, 2), ("1%", 4, 1), ("100%", 5, 5), ("0%", 4, 0), (9, 4, 4)])
def test_a_step_count_is_a_percentage_of_replicas_rounded_up(value: Any, replicas: int, count: int) -> None:
    assert target_replicas(value, replicas) == count


@pytest.mark.parametrize(("text", "seconds"), [(30, 30), ("30", 30), ("30s", 30), ("5m", 300), ("1h", 3600),
                                               ("1.5m", None), ("m", None), (True, None)])
def test_pause_durations_read_as_argo_writes_them(text: Any, seconds: int | None) -> None:
    assert parse_duration(text) == seconds


def test_promote_moves_past_the_step_or_asks_for_all_of_them() -> None:
    sts = _with([{"replicas": 1}, {"pause": {}}])
    sts["status"] = {"currentRevision": "web-a", "updateRevision": "web-b", "currentStepIndex": 1,
                     "pauseStartTime": 100.0}
    assert promoted_status(sts, full=False) == {"currentRevision": "web-a", "updateRevision": "web-b",
                                                "currentStepIndex": 2}
    assert promoted_status(sts, full=True)["promoteFull"] is True
    sts["status"]["currentRevision"] = "web-b"
    with pytest.raises(NothingToPromote, match="no rollout under way"):
        promoted_status(sts, full=False)
    with pytest.raises(NothingToPromote, match="no canary steps"):
        promoted_status(SET, full=False)


SCHEMA = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


@pytest.mark.parametrize("steps", VALID)
def test_the_crd_alone_keeps_valid_steps(steps: Any) -> None:
    stored, errors = admit_custom(_with(steps), None, SCHEMA)
    assert errors == []
    assert stored["spec"]["updateStrategy"]["rollingUpdate"]["steps"] == steps  # not pruned


@pytest.mark.parametrize(("steps", "path", "words"), INVALID)
def test_the_crd_alone_refuses_what_validation_refuses_at_the_same_step(steps: Any, path: str, words: str) -> None:
    _, errors = admit_custom(_with(steps), None, SCHEMA)
    assert errors, f"the CRD accepted {steps!r}"
    index = path.split("]", maxsplit=1)[0] + "]" if "[" in path else path
    assert any(f"rollingUpdate.{index}" in e.path for e in errors), [str(e) for e in errors]
