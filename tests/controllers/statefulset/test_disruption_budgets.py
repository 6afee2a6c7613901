"""PodDisruptionBudget-aware deletion: voluntary deletions (rolling update, Recreate, scale-in) wait rather than
exceed a budget; a failed pod is replaced regardless; AlwaysAllow lets an unready pod go."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_set, pdb
from harness import Harness

from rollwise.api.disruption import budget_state, eviction_verdict
from rollwise.api.predicates import is_running_and_ready
from rollwise.controllers.plan import DeletePod

POLICIES = ["OrderedReady", "Parallel"]


def _settled(policy: str = "OrderedReady", replicas: int = 3, **kw: Any) -> Harness:
    h = Harness(make_set(replicas=replicas, policy=policy, **kw))
    h.settle()
    return h


def _never_below(h: Harness, floor: int, syncs: int = 60) -> list[str]:
    """Drive the set, one pod step at a time, and check that no controller deletion takes Ready pods below
    ``floor``; returns the deleted pods in order."""
    deleted: list[str] = []
    for _ in range(syncs):
        plan = h.sync()
        names = [d.name for d in plan.of_type(DeletePod)]
        deleted += names
        ready = [p for p in h.pods() if is_running_and_ready(p) and p["metadata"].get("deletionTimestamp") is None]
        assert len(ready) >= floor, (names, [p["metadata"]["name"] for p in ready])
        h.step_pods()
    return deleted


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("budget", [{"minAvailable": 2}, {"maxUnavailable": 1}, {"minAvailable": "60%"},
                                    {"maxUnavailable": "33%"}], ids=["min-2", "max-1", "min-60%", "max-33%"])
def test_a_rollout_with_a_larger_budget_of_its_own_takes_one_pod_at_a_time(policy: str,
                                                                          budget: dict[str, Any]) -> None:
    h = _settled(policy, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}})
    h.cluster.create(pdb(**budget))
    h.set_image("nginx:2")
    deleted = _never_below(h, 2)
    assert sorted(deleted) == ["foo-0", "foo-1", "foo-2"]
    assert set(h.images().values()) == {"nginx:2"}


def test_a_refused_step_waits_and_names_the_budget() -> None:
    h = _settled("Parallel", strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}})
    h.cluster.create(pdb(minAvailable=3))
    h.set_image("nginx:2")
    plan = h.sync()
    assert not plan.of_type(DeletePod)
    assert "PodDisruptionBudget foo-pdb allows 0 disruptions (needs 3 healthy pods, has 3)" in str(plan.blocked[0])
    progressing = next(c for c in h.status()["conditions"] if c["type"] == "Progressing")
    assert "PodDisruptionBudget foo-pdb allows 0 disruptions" in progressing["message"]
    h.cluster.delete("PodDisruptionBudget", "default", "foo-pdb")
    assert h.sync().of_type(DeletePod)


@pytest.mark.parametrize("policy", POLICIES)
def test_scale_in_waits_for_the_budget(policy: str) -> None:
    h = _settled(policy, replicas=4)
    h.cluster.create(pdb(minAvailable=3))
    h.patch_set({"spec": {"replicas": 1}})
    plan = h.sync()
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-3"]
    h.step_pods()
    plan = h.sync()
    assert not plan.of_type(DeletePod)
    assert "PodDisruptionBudget foo-pdb allows 0 disruptions" in str(plan.blocked[0])


@pytest.mark.parametrize("policy", POLICIES)
def test_recreate_deletes_old_pods_as_the_budget_allows(policy: str) -> None:
    h = _settled(policy, strategy={"type": "Recreate"})
    h.cluster.create(pdb(maxUnavailable=1))
    h.set_image("nginx:2")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-0"]
    assert not h.sync().of_type(DeletePod)


def test_a_failed_pod_is_replaced_whatever_the_budget() -> None:
    h = _settled("OrderedReady")
    h.cluster.create(pdb(minAvailable=3))
    h.set_status("foo-1", phase="Failed")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-1"]


@pytest.mark.parametrize(("policy", "allowed"), [("AlwaysAllow", True), ("IfHealthyBudget", False)])
def test_an_unready_outdated_pod_goes_under_always_allow_only_when_the_budget_is_spent(
        policy: str, allowed: bool) -> None:
    h = _settled("Parallel", strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}})
    h.cluster.create(pdb(minAvailable=3, unhealthyPodEvictionPolicy=policy))
    h.set_status("foo-2", phase="Running", ready=False)
    h.set_image("nginx:2")
    deleted = [d.name for d in h.sync().of_type(DeletePod)]
    assert deleted == (["foo-2"] if allowed else [])


def test_budget_state_follows_the_disruption_controller() -> None:
    h = _settled("Parallel", replicas=4)
    pods = h.pods()
    scales = {h.sts["metadata"]["uid"]: 5}  # one replica missing: percentages scale the controller's replicas
    state = budget_state(pdb(maxUnavailable="25%"), pods, scales)
    assert (state.expected, state.desired_healthy, state.current_healthy, state.allowed) == (5, 3, 4, 1)
    state = budget_state(pdb(minAvailable=4), pods, scales)
    assert (state.expected, state.desired_healthy, state.allowed) == (4, 4, 0)
    verdict = eviction_verdict(state, pods[0])
    assert not verdict.allowed and verdict.reason == ("The disruption budget foo-pdb needs 4 healthy pods and has "
                                                      "4 currently")
    everything = {**pdb(minAvailable=1), "spec": {"selector": {}, "minAvailable": 1}}
    assert budget_state(everything, pods).current_healthy == 4
