"""Canary steps in the simulator (controllers/statefulset/steps.py): ``[{replicas: 1}, {pause: {}}]`` holds one pod
at the new revision until a ``promote`` step, then finishes; a timed pause proceeds by itself in virtual time; every
decision is judged by the invariants on the way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judged import judge_every_decision

from rollwise.api.identity import revision_of
from rollwise.sim import Simulation, load_scenario, parse_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "examples" / "canary-steps.yaml"
IMAGE_V2 = {"patch": {"kind": "StatefulSet", "name": "web",
                      "merge": {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:v2"}]}}}}}}


def _scenario(steps: list[dict[str, Any]], *, canary: list[dict[str, Any]], replicas: int = 4) -> dict[str, Any]:
    return {
        "name": "canary",
        "kubelet": {"startSeconds": 2, "readySeconds": 1, "terminationSeconds": 2},
        "objects": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"steps": canary}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}},
        }],
        "steps": [{"waitFor": {"ready": "web", "timeout": 300}}, IMAGE_V2, *steps],
    }


def _run(raw: dict[str, Any] | Path) -> tuple[Simulation, dict[str, Any], list[str]]:
    sim = Simulation(load_scenario(raw) if isinstance(raw, Path) else parse_scenario(raw))
    problems = judge_every_decision(sim)
    return sim, sim.run(), problems


def _set(sim: Simulation) -> dict[str, Any]:
    return sim.cluster.get("StatefulSet", "default", "web")


def _at_update(sim: Simulation) -> list[str]:
    update = _set(sim)["status"]["updateRevision"]
    return sorted(p["metadata"]["name"] for p in sim.cluster.list("Pod", "default") if revision_of(p) == update)


def _deleted(result: dict[str, Any]) -> list[tuple[float, str]]:
    return [(e["t"], e["pod"]) for e in result["events"]
            if e["type"] == "PodDeleteRequested" and e["by"] == "statefulset-controller"]


def test_an_indefinite_pause_holds_one_pod_at_the_new_revision_and_says_so() -> None:
    sim, _, problems = _run(_scenario([{"after": 3600}], canary=[{"replicas": 1}, {"pause": {}}]))
    assert problems == []
    assert _at_update(sim) == ["web-3"]
    status = _set(sim)["status"]
    assert status["currentStepIndex"] == 1 and status["stableRevision"] == status["currentRevision"]
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("Unknown", "RolloutStepPaused")
    assert progressing["message"] == "step 2 of 2 (pause until promoted): paused until promoted"


def test_a_held_canary_writes_nothing_while_the_world_stands_still() -> None:
    sim, _, _ = _run(_scenario([{"after": 100}], canary=[{"replicas": 1}, {"pause": {}}]))
    version = _set(sim)["metadata"]["resourceVersion"]
    sim2, _, _ = _run(_scenario([{"after": 3600}], canary=[{"replicas": 1}, {"pause": {}}]))
    assert _set(sim2)["metadata"]["resourceVersion"] == version  # an hour more of holding: no status write


def test_promote_lets_the_held_canary_finish() -> None:
    sim, result, problems = _run(_scenario([{"after": 600}, {"promote": {"name": "web"}},
                                            {"waitFor": {"rolloutComplete": "web", "timeout": 600}}],
                                           canary=[{"replicas": 1}, {"pause": {}}]))
    assert problems == []
    deleted = _deleted(result)
    assert [pod for _, pod in deleted] == ["web-3", "web-2", "web-1", "web-0"]
    assert deleted[1][0] - deleted[0][0] >= 600  # the rest only after the promote
    status = _set(sim)["status"]
    assert status["currentRevision"] == status["updateRevision"] and status["currentStepIndex"] == 2
    assert _at_update(sim) == ["web-0", "web-1", "web-2", "web-3"]


def test_without_promote_the_canary_never_goes_past_its_first_pod() -> None:
    _, result, _ = _run(_scenario([{"after": 7200}], canary=[{"replicas": 1}, {"pause": {}}]))
    assert [pod for _, pod in _deleted(result)] == ["web-3"]


def test_a_timed_pause_proceeds_by_itself_in_virtual_time() -> None:
    sim, result, problems = _run(_scenario([{"waitFor": {"rolloutComplete": "web", "timeout": 900}}],
                                           canary=[{"replicas": "50%"}, {"pause": {"duration": "2m"}}]))
    assert problems == []
    deleted = _deleted(result)
    assert [pod for _, pod in deleted] == ["web-3", "web-2", "web-1", "web-0"]
    (t2, _), (t1, _) = deleted[1], deleted[2]
    assert 120 <= t1 - t2 < 140  # the two canary pods, two minutes of pause, then the rest
    assert _set(sim)["status"]["currentRevision"] == _set(sim)["status"]["updateRevision"]


def test_an_analysis_step_whose_template_is_missing_errors_and_aborts_naming_it() -> None:
    missing = {"analysis": {"templates": [{"templateName": "ok"}]}}
    sim, result, problems = _run(_scenario([{"after": 600}], canary=[{"replicas": 1}, missing]))
    assert problems == []
    assert [pod for _, pod in _deleted(result)] == ["web-3", "web-3"]  # to the canary revision, then back
    status = _set(sim)["status"]
    run = f"{status['abortedRevision']}-1"
    (stored,) = sim.cluster.list("AnalysisRun.apps.rollwise.dev", "default")
    assert stored["metadata"]["name"] == run and stored["status"]["phase"] == "Error"
    assert status["abort"] is True and 'AnalysisTemplate "ok" not found' in status["abortMessage"]


def test_a_new_template_mid_canary_starts_again_at_step_zero() -> None:
    image_v3 = {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "app:v3"}]}}}}}}
    sim, _, problems = _run(_scenario([{"after": 100}, {"promote": {"name": "web"}}, {"after": 100}, image_v3,
                                       {"after": 600}],
                                      canary=[{"replicas": 1}, {"pause": {}}, {"replicas": 2}, {"pause": {}}]))
    assert problems == []
    assert _set(sim)["status"]["currentStepIndex"] == 1
    assert _at_update(sim) == ["web-3"]  # the new revision's canary is one pod again


def test_the_example_holds_then_promotes_then_waits_half_a_minute_then_finishes() -> None:
    sim, _, problems = _run(EXAMPLE)
    assert problems == []
    assert _set(sim)["status"]["currentRevision"] == _set(sim)["status"]["updateRevision"]


def test_promote_full_skips_every_step_left_and_is_forgotten_once_done() -> None:
    sim, result, problems = _run(_scenario([{"after": 300}, {"promote": {"name": "web", "full": True}},
                                            {"waitFor": {"rolloutComplete": "web", "timeout": 600}}, {"after": 60}],
                                           canary=[{"replicas": 1}, {"pause": {}}, {"replicas": 2}, {"pause": {}}]))
    assert problems == []
    assert [pod for _, pod in _deleted(result)] == ["web-3", "web-2", "web-1", "web-0"]
    status = _set(sim)["status"]
    assert status["currentRevision"] == status["updateRevision"]
    assert status["currentStepIndex"] == 4 and "promoteFull" not in status


def test_a_pre_delete_hook_still_holds_each_canary_pod() -> None:
    raw = _scenario([{"after": 120}], canary=[{"replicas": 1}, {"pause": {}}])
    spec = raw["objects"][0]["spec"]
    spec["lifecycle"] = {"preDelete": {"labelsHandler": {"example.com/drain": "pending"}}}
    spec["template"]["metadata"]["labels"]["example.com/drain"] = "pending"
    raw["kubelet"]["hookReleaseSeconds"] = 20
    _, result, problems = _run(raw)
    assert problems == []
    marks = [e["message"].split()[1] for e in result["events"] if e.get("reason") == "PreparingDelete"]
    assert marks == ["web-3"]  # the canary's one pod, marked and drained before it goes; no other
    assert [pod for _, pod in _deleted(result)] == ["web-3"]


def test_enforced_rolling_update_takes_steps_in_its_own_block_and_promote_reads_them() -> None:
    raw = _scenario([{"after": 300}], canary=[])
    raw["objects"][0]["spec"]["updateStrategy"] = {
        "type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"steps": [{"replicas": 1}, {"pause": {}}]}}
    _, result, problems = _run(raw)
    assert problems == [] and [pod for _, pod in _deleted(result)] == ["web-3"]
    raw["steps"] += [{"promote": {"name": "web"}}, {"waitFor": {"rolloutComplete": "web", "timeout": 600}}]
    _, result, problems = _run(raw)
    assert problems == [] and [pod for _, pod in _deleted(result)] == ["web-3", "web-2", "web-1", "web-0"]


ABORT_EXAMPLE = EXAMPLE.with_name("canary-abort.yaml")


def test_an_abort_step_takes_the_canary_pods_back_and_touches_no_other() -> None:
    sim, result, problems = _run(_scenario([{"after": 120}, {"abort": {"name": "web"}}, {"after": 300}],
                                           canary=[{"replicas": 2}, {"pause": {}}]))
    assert problems == []
    assert [pod for _, pod in _deleted(result)] == ["web-3", "web-2", "web-3", "web-2"]  # out, then back
    status = _set(sim)["status"]
    assert status["abort"] is True and status["currentRevision"] == status["updateRevision"]
    assert {revision_of(p) for p in sim.cluster.list("Pod", "default")} == {status["currentRevision"]}
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "RolloutAborted")
    assert _set(sim)["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v2"  # the spec keeps it


def test_an_abort_with_no_rollout_under_way_is_a_rejected_step() -> None:
    _, result, _ = _run(_scenario([{"waitFor": {"rolloutComplete": "web", "timeout": 600}}, {"abort": {"name": "web"}}],
                                  canary=[{"replicas": 1}]))
    rejected = [e for e in result["events"] if e["type"] == "StepRejected"]
    assert [e["action"] for e in rejected] == ["abort"] and "no rollout under way" in rejected[0]["message"]


def test_the_abort_example_goes_back_then_retries_from_the_first_step() -> None:
    sim, result, problems = _run(ABORT_EXAMPLE)
    assert problems == []
    assert [pod for _, pod in _deleted(result)] == ["web-3", "web-2", "web-3", "web-2", "web-3", "web-2"]
    status = _set(sim)["status"]
    assert "abort" not in status and status["currentStepIndex"] == 1
    assert _at_update(sim) == ["web-2", "web-3"]
    claims = {c["metadata"]["name"] for c in sim.cluster.list("PersistentVolumeClaim", "default")}
    assert claims == {f"data-web-{i}" for i in range(4)}  # the same four claims throughout
