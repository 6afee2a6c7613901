"""Reserved ordinals (``spec.reserveOrdinals``, OpenKruise's field) in the simulator: the set's pods skip them
across creation, scale out, scale in, an update and a change of the list, under every reconcile's invariants."""

from __future__ import annotations

from typing import Any

import pytest
from judged import judge_every_decision

from rollwise import invariants
from rollwise.cli.plan import preview
from rollwise.cli.timeline import MISSING, pod_intervals
from rollwise.sim import Simulation, parse_scenario


def _set(*, kind: str, management: str, replicas: int, reserve: list[int], start: int = 0,
         strategy: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas, "serviceName": "web", "podManagementPolicy": management, "reserveOrdinals": reserve,
        "selector": {"matchLabels": {"app": "web"}},
        "updateStrategy": strategy or {"type": "RollingUpdate"},
        "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete", "whenDeleted": "Retain"},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                  "spec": {"accessModes": ["ReadWriteOnce"],
                                           "resources": {"requests": {"storage": "1Gi"}}}}]}
    if start:
        spec["ordinals"] = {"start": start}
    return {"apiVersion": kind, "kind": "StatefulSet", "metadata": {"name": "web"}, "spec": spec}


def _merge(spec: dict[str, Any]) -> dict[str, Any]:
    return {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": spec}}}


DONE: list[dict[str, Any]] = [{"waitFor": {"rolloutComplete": "web", "timeout": 600}}]
READY: list[dict[str, Any]] = [{"waitFor": {"ready": "web", "timeout": 600}}]


def _run(obj: dict[str, Any], steps: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str], list[set[int]]]:
    """The result, every invariant finding, and the set of pod ordinals after every reconcile."""
    raw = {"name": "reserved", "kubelet": {"startSeconds": 5, "readySeconds": 2, "terminationSeconds": 3},
           "objects": [obj], "steps": steps}
    sim = Simulation(parse_scenario(raw))
    problems: list[str] = []
    created: list[set[int]] = []

    def observe(view: Any, plan: Any) -> None:
        problems.extend(invariants.judge(invariants.Decision(view=view, actions=plan.actions)))
        created.append({int(a.pod["metadata"]["name"].rsplit("-", 1)[1]) for a in plan.actions
                        if type(a).__name__ == "CreatePod"})

    sim.observers.append(observe)
    return sim.run(), problems, created


def _ordinals(result: dict[str, Any]) -> list[int]:
    return sorted(int(p["name"].rsplit("-", 1)[1]) for p in result["final"]["pods"])


def _claims(result: dict[str, Any]) -> list[str]:
    return sorted(c["name"] for c in result["final"]["claims"])


@pytest.mark.parametrize("kind", ["apps/v1", "apps.rollwise.dev/v1alpha1"])
@pytest.mark.parametrize("management", ["OrderedReady", "Parallel"])
def test_a_set_of_three_with_one_reserved_runs_0_2_and_3(kind: str, management: str) -> None:
    result, problems, created = _run(_set(kind=kind, management=management, replicas=3, reserve=[1]), DONE)
    assert not problems, problems[:5]
    assert _ordinals(result) == [0, 2, 3]
    assert all(1 not in c for c in created), "no pod is ever created at a reserved ordinal"
    status = result["final"]["statefulSets"][0]["status"]
    assert status["replicas"] == status["readyReplicas"] == status["availableReplicas"] == 3


def test_reserved_ordinals_compose_with_ordinals_start() -> None:
    obj = _set(kind="apps/v1", management="OrderedReady", replicas=3, reserve=[1, 6, 8], start=5)
    result, problems, _ = _run(obj, DONE)
    assert not problems, problems[:5]
    assert _ordinals(result) == [5, 7, 9], "1 is below start and reserves nothing; 6 and 8 are skipped"


@pytest.mark.parametrize("management", ["OrderedReady", "Parallel"])
def test_reserved_ordinals_hold_across_scale_out_scale_in_and_an_update(management: str) -> None:
    obj = _set(kind="apps.rollwise.dev/v1alpha1", management=management, replicas=3, reserve=[1, 4],
               strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}})
    steps = [*DONE, _merge({"replicas": 5}), *DONE,
             _merge({"template": {"spec": {"containers": [{"name": "app", "image": "app:v2"}]}}}), *DONE,
             _merge({"replicas": 2}), *DONE]
    result, problems, created = _run(obj, steps)
    assert not problems, problems[:5]
    assert all(not c & {1, 4} for c in created), "no pod is ever created at a reserved ordinal"
    assert _ordinals(result) == [0, 2]
    assert _claims(result) == ["data-web-0", "data-web-2"], "whenScaled Delete removed the scaled-in claims"
    scaled_out = [e["pod"] for e in result["events"] if e["type"] == "PodCreated"]
    assert {"web-5", "web-6"} <= set(scaled_out), "scale out to 5 runs 0, 2, 3, 5, 6"
    assert "web-1" not in scaled_out and "web-4" not in scaled_out
    status = result["final"]["statefulSets"][0]["status"]
    assert status["updatedReplicas"] == 2 and status["currentRevision"] == status["updateRevision"]


@pytest.mark.parametrize("management", ["OrderedReady", "Parallel"])
def test_reserving_an_ordinal_moves_its_pod_and_unreserving_it_moves_it_back(management: str) -> None:
    obj = _set(kind="apps/v1", management=management, replicas=3, reserve=[])
    steps = [*DONE, _merge({"reserveOrdinals": [1]}), *DONE, {"after": 10}]
    result, problems, _ = _run(obj, steps)
    assert not problems, problems[:5]
    assert _ordinals(result) == [0, 2, 3]
    deleted = [e["pod"] for e in result["events"] if e["type"] == "PodDeleteRequested"]
    assert deleted == ["web-1"], "the pod at the newly reserved ordinal is deleted, as a scale-in deletes"
    moved = [e["pod"] for e in result["events"] if e["type"] == "PodCreated"][3:]
    assert moved == ["web-3"]

    back = [*DONE, _merge({"reserveOrdinals": [1]}), *DONE, _merge({"reserveOrdinals": []}), *DONE]
    result, problems, _ = _run(obj, back)
    assert not problems, problems[:5]
    assert _ordinals(result) == [0, 1, 2]


def test_ordered_ready_creates_the_new_ordinal_before_deleting_the_reserved_one() -> None:
    # OrderedReady: every wanted pod is Running and Ready before a scale-in deletes (reference §5.3).
    obj = _set(kind="apps/v1", management="OrderedReady", replicas=3, reserve=[])
    result, problems, _ = _run(obj, [*DONE, _merge({"reserveOrdinals": [0]}), *DONE])
    assert not problems, problems[:5]
    assert _ordinals(result) == [1, 2, 3]
    events = [(e["type"], e["pod"]) for e in result["events"] if e["type"] in ("PodCreated", "PodDeleteRequested")]
    assert events[3:] == [("PodCreated", "web-3"), ("PodDeleteRequested", "web-0")]


def test_a_partition_counts_wanted_ordinals() -> None:
    # partition 2 holds the two lowest wanted ordinals (0 and 2) at the current revision.
    obj = _set(kind="apps/v1", management="OrderedReady", replicas=4, reserve=[1],
               strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}})
    steps = [*DONE, _merge({"template": {"spec": {"containers": [{"name": "app", "image": "app:v2"}]}}}), *DONE]
    result, problems, _ = _run(obj, steps)
    assert not problems, problems[:5]
    images = {p["name"]: p["images"] for p in result["final"]["pods"]} if "images" in result["final"]["pods"][0] \
        else None
    revisions = {p["name"]: p["revision"] for p in result["final"]["pods"]}
    status = result["final"]["statefulSets"][0]["status"]
    assert revisions["web-0"] == revisions["web-2"] == status["currentRevision"], images
    assert revisions["web-3"] == revisions["web-4"] == status["updateRevision"]


def test_the_timeline_never_draws_a_reserved_ordinal_as_missing() -> None:
    obj = _set(kind="apps/v1", management="OrderedReady", replicas=3, reserve=[1])
    result, _, _ = _run(obj, [*DONE, _merge({"reserveOrdinals": [1, 2]}), *DONE, {"after": 10}])
    assert result["final"]["statefulSets"][0]["spec"]["reserveOrdinals"] == [1, 2]
    assert result["samples"]["web"]["ordinals"][-1][3] == [1, 2]
    lanes = pod_intervals(result)["web"]
    assert 1 not in lanes, "ordinal 1 is reserved throughout: no lane"
    assert lanes[2][-1].state != MISSING and lanes[2][-1].end < result["endedAt"], "2 ends when its pod goes"
    assert [iv.state for iv in lanes[4]][-1] != MISSING


def test_a_pod_disruption_budget_holds_the_move_off_a_newly_reserved_ordinal_until_it_allows_it() -> None:
    # The pod at the newly reserved ordinal goes as a scale-in goes: a voluntary deletion, under every budget.
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
              "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "web"}}}}
    obj = _set(kind="apps/v1", management="Parallel", replicas=3, reserve=[])
    raw = {"name": "reserved-pdb", "kubelet": {"startSeconds": 5, "readySeconds": 2, "terminationSeconds": 3},
           "objects": [budget, obj],
           "steps": [*DONE, _merge({"reserveOrdinals": [1]}), {"after": 60}]}
    sim = Simulation(parse_scenario(raw))
    problems = judge_every_decision(sim)
    result = sim.run()
    assert not problems, problems[:5]
    assert _ordinals(result) == [0, 1, 2, 3], "web-3 came up; web-1 waits for the budget (4 must stay available)"
    [waits] = [entry["waiting"] for entry in preview(sim)[0]["controllers"] if entry.get("waiting")]
    assert "web-1" in str(waits) and "PodDisruptionBudget web allows 0 disruptions" in str(waits), waits
