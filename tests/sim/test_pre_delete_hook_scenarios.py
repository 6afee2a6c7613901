"""Pre-delete hooks in the simulator: the application's agent modelled by ``kubelet.hookReleaseSeconds`` (or per
image) or by a ``releaseHook`` step; no pod deleted while it carries its hook (the pre-delete-hook rule judged on
every reconcile); a timeout halts and says so; a Failed pod is replaced without waiting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from judged import judge_every_decision

from rollwise.cli import main
from rollwise.sim import Simulation, load_scenario, parse_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "examples" / "safer" / "pre-delete-hook.yaml"
HOOK = {"example.com/drain": "pending"}


def _scenario(*, steps: list[dict[str, Any]], kubelet: dict[str, Any] | None = None, replicas: int = 3,
              strategy: dict[str, Any] | None = None, policy: str = "OrderedReady",
              timeout: int | None = None) -> dict[str, Any]:
    pre: dict[str, Any] = {"labelsHandler": HOOK}
    if timeout:
        pre["timeoutSeconds"] = timeout
    return {
        "name": "hooks",
        "kubelet": {"startSeconds": 2, "readySeconds": 1, "terminationSeconds": 2, **(kubelet or {})},
        "objects": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "podManagementPolicy": policy, "selector": {"matchLabels": {"app": "web"}},
                     "updateStrategy": strategy or {"type": "RollingUpdate"}, "lifecycle": {"preDelete": pre},
                     "template": {"metadata": {"labels": {"app": "web", **HOOK}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}},
        }],
        "steps": [{"waitFor": {"ready": "web", "timeout": 300}}, *steps],
    }


IMAGE_V2 = {"patch": {"kind": "StatefulSet", "name": "web",
                      "merge": {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:v2"}]}}}}}}


def _run(raw: dict[str, Any] | Path) -> tuple[dict[str, Any], list[str]]:
    sim = Simulation(load_scenario(raw) if isinstance(raw, Path) else parse_scenario(raw))
    problems = judge_every_decision(sim)
    return sim.run(), problems


def _events(result: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in result["events"] if e["type"] == kind]


def _deletions(result: dict[str, Any]) -> list[tuple[float, str]]:
    return [(e["t"], e["pod"]) for e in _events(result, "PodDeleteRequested") if e["by"] == "statefulset-controller"]


def _marks(result: dict[str, Any]) -> list[tuple[float, str]]:
    return [(e["t"], e["message"].split()[1]) for e in result["events"] if e.get("reason") == "PreparingDelete"]


def test_the_example_deletes_each_pod_only_after_its_agent_drained_it_and_halts_on_the_timeout() -> None:
    result, problems = _run(EXAMPLE)
    assert not problems, problems[:5]
    marks, deletions = _marks(result), _deletions(result)
    assert [pod for _, pod in marks] == [pod for _, pod in deletions] == ["web-2", "web-1", "web-0"] * 2
    waits = [deleted - marked for (marked, _), (deleted, _) in zip(marks, deletions, strict=True)]
    assert waits == [15.0] * 3 + [300.0] * 3, "app:v1's agent drains in 15 s, app:v2's in 300 s"
    timeouts = [e for e in result["events"] if e.get("reason") == "PreDeleteHookTimeout"]
    assert [e["t"] - m for e, (m, _) in zip(timeouts, marks[3:], strict=True)] == [120.0] * 3
    assert "web-2 still carries label example.com/drain=pending" in timeouts[0]["message"]
    assert result["summary"]["web"]["completed"] is True
    assert result["summary"]["web"]["maxUnavailableObserved"] == 1


@pytest.mark.parametrize("strategy", [{"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
                                      {"type": "Recreate"}, {"type": "EnforcedRollingUpdate"}],
                         ids=lambda s: s["type"])
@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_every_strategy_waits_for_the_agent_and_keeps_the_rule(strategy: dict[str, Any], policy: str) -> None:
    result, problems = _run(_scenario(steps=[IMAGE_V2, {"waitFor": {"rolloutComplete": "web", "timeout": 600}}],
                                      kubelet={"hookReleaseSeconds": 10}, strategy=strategy, policy=policy))
    assert not problems, problems[:5]
    marks = {pod: t for t, pod in _marks(result)}
    for t, pod in _deletions(result):
        assert t >= marks[pod] + 10.0, (pod, t, marks[pod])
    assert result["summary"]["web"]["completed"] is True


def test_without_an_agent_a_release_hook_step_frees_the_scale_in() -> None:
    result, problems = _run(_scenario(steps=[{"scale": {"name": "web", "replicas": 2}}, {"after": 50},
                                             {"releaseHook": "web-2"}, {"after": 10}]))
    assert not problems
    marks, deletions = _marks(result), _deletions(result)
    assert [pod for _, pod in marks] == ["web-2"]
    assert [pod for _, pod in deletions] == ["web-2"] and deletions[0][0] == marks[0][0] + 50.0


def test_a_failed_pod_is_replaced_without_waiting_for_its_hook() -> None:
    result, problems = _run(_scenario(steps=[{"podFault": {"pod": "web-1", "fault": "fail"}}, {"after": 20}]))
    assert not problems
    assert not _marks(result) and [pod for _, pod in _deletions(result)] == ["web-1"]


def test_simulate_and_plan_show_the_wait_and_the_halt(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLE), "--at", "200"]) == 0
    out = capsys.readouterr().out
    assert ("waiting for web-2 to be released by its pre-delete hook: still carries label example.com/drain=pending "
            "(PreparingDelete since 1970-01-01T00:01:09Z); its timeoutSeconds (120) passed: the rollout is halted "
            "(PreDeleteHookTimeout)") in out
    assert main(["simulate", str(EXAMPLE), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert any(e.get("reason") == "PreDeleteHookTimeout" for e in document["events"])


@pytest.mark.parametrize(("kubelet", "path"), [({"hookReleaseSeconds": -1}, "kubelet.hookReleaseSeconds"),
                                               ({"images": {"app:v1": {"hookReleaseSeconds": "x"}}},
                                                'kubelet.images["app:v1"].hookReleaseSeconds')])
def test_a_bad_release_time_is_refused_with_its_path(kubelet: dict[str, Any], path: str,
                                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(_scenario(steps=[], kubelet=kubelet)))
    assert main(["simulate", str(file)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and path in captured.err


def test_a_finalizer_hook_from_the_template_holds_until_the_agent_removes_it() -> None:
    raw = _scenario(steps=[IMAGE_V2, {"waitFor": {"rolloutComplete": "web", "timeout": 600}}],
                    kubelet={"hookReleaseSeconds": 7})
    spec = raw["objects"][0]["spec"]
    spec["lifecycle"] = {"preDelete": {"finalizersHandler": ["example.com/drain"]}}
    spec["template"]["metadata"] = {"labels": {"app": "web"}, "finalizers": ["example.com/drain"]}
    result, problems = _run(raw)
    assert not problems, problems[:5]
    marks, deletions = _marks(result), _deletions(result)
    assert [pod for _, pod in deletions] == ["web-2", "web-1", "web-0"]
    assert [d - m for (m, _), (d, _) in zip(marks, deletions, strict=True)] == [7.0] * 3
    assert "finalizer example.com/drain" in next(e["message"] for e in result["events"]
                                                 if e.get("reason") == "PreparingDelete")
    assert result["summary"]["web"]["completed"] is True
