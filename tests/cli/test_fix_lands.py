"""A fix always lands (issue 23): for every recovering strategy, under both pod management policies, a broken
template (a pull failure or a crash loop) followed by a fix completes on the fix in the simulator. The same story
on ``rollwise up`` and through the operator runs a representative subset (tests/apiserver/test_fix_lands_on_up.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fix_matrix import FAULTS, POLICIES, RECOVERING

from rollwise.cli import main


def _story(strategy: dict[str, Any], policy: str, fault: str) -> dict[str, Any]:
    image = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:v2-bad"}]}}}}
    fixed = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:v3"}]}}}}
    return {
        "name": "broken-then-fixed",
        "kubelet": {"images": {"app:v2-bad": {"fail": fault}}},
        "objects": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": 3, "podManagementPolicy": policy, "updateStrategy": strategy,
                     "progressDeadlineSeconds": 300, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}}}],
        "steps": [{"waitFor": {"ready": "web", "timeout": 120}},
                  {"patch": {"kind": "StatefulSet", "name": "web", "merge": image}},
                  {"after": 60},
                  {"patch": {"kind": "StatefulSet", "name": "web", "merge": fixed}},
                  {"waitFor": {"rolloutComplete": "web", "timeout": 1200}}],
        "limitSeconds": 1500,
    }


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("strategy", sorted(RECOVERING))
def test_a_broken_template_then_a_fix_completes_on_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           strategy: str, policy: str, fault: str) -> None:
    path = tmp_path / "story.yaml"
    path.write_text(yaml.safe_dump(_story(RECOVERING[strategy], policy, fault)))
    assert main(["simulate", str(path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["summary"]["web"]["completed"] is True, result["final"]["statefulSets"][0]["status"]
    status = result["final"]["statefulSets"][0]["status"]
    pods = result["final"]["pods"]
    assert sorted(p["name"] for p in pods) == ["web-0", "web-1", "web-2"]
    assert all(p["revision"] == status["updateRevision"] and p["ready"] for p in pods)
    assert not any(e.get("type") == "WaitTimedOut" for e in result["events"])


def test_plain_rolling_update_stays_in_the_trap_and_says_how_out(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "story.yaml"
    story = _story({"type": "RollingUpdate"}, "OrderedReady", "ImagePullBackOff")
    story["steps"][-1]["waitFor"]["timeout"] = 400
    story["limitSeconds"] = 500
    path.write_text(yaml.safe_dump(story))
    main(["simulate", str(path), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["summary"]["web"]["completed"] is False
    progressing = next(c for c in result["final"]["statefulSets"][0]["status"]["conditions"]
                       if c["type"] == "Progressing")
    message = progressing["message"]
    assert "web-2" in message and "older revision" in message and "will not replace" in message
    for way_out in ("kubectl delete pod web-2", "EnforcedRollingUpdate", "podProgressTimeoutSeconds"):
        assert way_out in message
