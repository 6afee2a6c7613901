"""In-place image updates (``rollingUpdate.podUpdatePolicy``) in the simulator: what changes, what does not, and
what every reconcile keeps (the invariants, the in-place-restart rule among them)."""

from __future__ import annotations

from typing import Any

import pytest
from judged import judge_every_decision

from rollwise.sim import Simulation, parse_scenario


def _scenario(*, policy: str, patch: dict[str, Any], kind: str = "apps/v1", max_unavailable: int = 1,
              partition: int = 0, management: str = "OrderedReady", replicas: int = 4) -> dict[str, Any]:
    block: dict[str, Any] = {"podUpdatePolicy": policy, "maxUnavailable": max_unavailable}
    if partition:
        block["partition"] = partition
    return {
        "name": "in-place",
        "kubelet": {"startSeconds": 5, "readySeconds": 2, "terminationSeconds": 3},
        "objects": [{
            "apiVersion": kind, "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "serviceName": "web", "podManagementPolicy": management,
                     "selector": {"matchLabels": {"app": "web"}},
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": block},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"],
                                                        "resources": {"requests": {"storage": "1Gi"}}}}]},
        }],
        "steps": [{"waitFor": {"ready": "web", "timeout": 300}},
                  {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {"template": patch}}}},
                  {"waitFor": {"rolloutComplete": "web", "timeout": 300}}, {"after": 30}],
    }


IMAGE_ONLY = {"spec": {"containers": [{"name": "app", "image": "app:v2"}]}}
MIXED = {"spec": {"containers": [{"name": "app", "image": "app:v2", "env": [{"name": "MODE", "value": "fast"}]}]}}


def _run(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    sim = Simulation(parse_scenario(raw))
    problems = judge_every_decision(sim)
    return sim.run(), problems


@pytest.mark.parametrize("kind", ["apps/v1", "apps.rollwise.dev/v1alpha1"])
@pytest.mark.parametrize("management", ["OrderedReady", "Parallel"])
@pytest.mark.parametrize("budget", [1, 2])
def test_an_image_only_change_updates_every_pod_in_place_within_the_budget(
        kind: str, management: str, budget: int) -> None:
    result, problems = _run(_scenario(policy="InPlaceIfPossible", patch=IMAGE_ONLY, kind=kind,
                                      management=management, max_unavailable=budget))
    assert not problems, problems[:5]
    web = result["summary"]["web"]
    assert web["completed"] and web["podCreations"] == 0 and web["podDeletions"] == 0
    assert web["podInPlaceUpdates"] == 4
    assert web["maxUnavailableObserved"] == budget
    pods = result["final"]["pods"]
    assert [p["restartCount"] for p in pods] == [1, 1, 1, 1]
    created = {e["pod"] for e in result["events"] if e["type"] == "PodCreated"}
    assert created == {"web-0", "web-1", "web-2", "web-3"}, "no pod is created after the first four"
    assert not [e for e in result["events"] if e["type"] in ("PodDeleteRequested", "PodGone")]
    assert len({p["uid"] for p in pods}) == 4
    status = result["final"]["statefulSets"][0]["status"]
    assert status["updatedReplicas"] == status["availableReplicas"] == 4
    assert status["currentRevision"] == status["updateRevision"]


def test_the_in_place_updates_go_highest_ordinal_first_and_keep_the_partition() -> None:
    result, problems = _run(_scenario(policy="InPlaceOnly", patch=IMAGE_ONLY, partition=2))
    assert not problems, problems[:5]
    order = [e["pod"] for e in result["events"] if e["type"] == "PodUpdatedInPlace"]
    assert order == ["web-3", "web-2"]
    restarts = {p["name"]: p["restartCount"] for p in result["final"]["pods"]}
    assert restarts == {"web-0": 0, "web-1": 0, "web-2": 1, "web-3": 1}


def test_a_pod_is_unavailable_from_the_patch_until_its_new_container_is_ready() -> None:
    result, _ = _run(_scenario(policy="InPlaceIfPossible", patch=IMAGE_ONLY, max_unavailable=1))
    events = result["events"]
    patched = next(e["t"] for e in events if e["type"] == "PodUpdatedInPlace" and e["pod"] == "web-3")
    ready = next(e["t"] for e in events if e["type"] == "PodReady" and e["pod"] == "web-3" and e["t"] > patched)
    assert ready - patched == pytest.approx(7.0), "startSeconds + readySeconds of the new image: a readiness gap"
    nxt = next(e["t"] for e in events if e["type"] == "PodUpdatedInPlace" and e["pod"] == "web-2")
    assert nxt >= ready, "the next pod waits for the budget the restarting one holds"
    assert result["summary"]["web"]["unavailablePodSeconds"] == pytest.approx(4 * 7.0)


def test_a_mixed_change_recreates_under_in_place_if_possible() -> None:
    result, problems = _run(_scenario(policy="InPlaceIfPossible", patch=MIXED))
    assert not problems, problems[:5]
    web = result["summary"]["web"]
    assert web["completed"] and web["podInPlaceUpdates"] == 0
    assert web["podDeletions"] == 4 and web["podCreations"] == 4


def test_in_place_only_halts_on_a_mixed_change_touching_no_pod() -> None:
    result, problems = _run(_scenario(policy="InPlaceOnly", patch=MIXED))
    assert not problems, problems[:5]
    web = result["summary"]["web"]
    assert not web["completed"]
    assert web["podInPlaceUpdates"] == 0 and web["podDeletions"] == 0 and web["podCreations"] == 0
    status = result["final"]["statefulSets"][0]["status"]
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert progressing["status"] == "False" and progressing["reason"] == "InPlaceUpdateImpossible"
    assert "web-3" in progressing["message"] and "spec.template.spec.containers[0].env" in progressing["message"]
    warnings = [e for e in result["events"] if e["type"] == "Event" and e["reason"] == "InPlaceUpdateImpossible"]
    assert len(warnings) == 1


def test_recreate_policy_is_the_default_and_deletes() -> None:
    raw = _scenario(policy="ReCreate", patch=IMAGE_ONLY)
    result, _ = _run(raw)
    assert result["summary"]["web"]["podDeletions"] == 4 and result["summary"]["web"]["podInPlaceUpdates"] == 0


def test_a_progress_timeout_counts_from_the_in_place_update_not_the_pods_creation() -> None:
    raw = _scenario(policy="InPlaceIfPossible", patch=IMAGE_ONLY, max_unavailable=2)
    raw["objects"][0]["spec"]["updateStrategy"]["rollingUpdate"]["podProgressTimeoutSeconds"] = 10
    result, problems = _run(raw)
    assert not problems, problems[:5]
    web = result["summary"]["web"]
    assert web["completed"] and web["podDeletions"] == 0 and web["podInPlaceUpdates"] == 4
    assert not [e for e in result["events"] if e["type"] == "Event" and e["reason"] == "PodProgressTimeout"]


def _enforced(raw: dict[str, Any], policy: str) -> dict[str, Any]:
    raw["objects"][0]["spec"]["updateStrategy"] = {
        "type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"podUpdatePolicy": policy, "maxUnavailable": 2}}
    return raw


def test_enforced_rolling_update_takes_the_same_policy_in_its_own_block() -> None:
    result, problems = _run(_enforced(_scenario(policy="ReCreate", patch=IMAGE_ONLY), "InPlaceOnly"))
    assert not problems, problems[:5]
    web = result["summary"]["web"]
    assert web["completed"] and web["podInPlaceUpdates"] == 4 and web["podDeletions"] == 0
    halted, _ = _run(_enforced(_scenario(policy="ReCreate", patch=MIXED), "InPlaceOnly"))
    conditions = halted["final"]["statefulSets"][0]["status"]["conditions"]
    assert any(c["reason"] == "InPlaceUpdateImpossible" for c in conditions)
    assert halted["summary"]["web"]["podDeletions"] == 0
