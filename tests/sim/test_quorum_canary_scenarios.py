"""A quorum-aware set's canary in the simulator: both controllers, the quorum model electing a leader, every decision
judged by the invariants. ``[{replicas: 1}, {pause: {}}]`` holds exactly one member at the new revision, a follower,
however long the pause lasts; ``promote`` lets the rest follow in DEP-07's order, the leader last; a timed pause
ends by itself; an abort takes the canary members back to the stable revision."""

from __future__ import annotations

from typing import Any

from judged import judge_every_decision

from rollwise.api.identity import revision_of
from rollwise.sim import Simulation, parse_scenario

IMAGE_V2 = {"patch": {"kind": "StatefulSet", "name": "store",
                      "merge": {"spec": {"template": {"spec": {"containers": [{"name": "raft",
                                                                                "image": "store:1.1"}]}}}}}}


def _scenario(steps: list[dict[str, Any]], canary: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": "quorum-canary",
        "kubelet": {"startSeconds": 3, "readySeconds": 1, "terminationSeconds": 1,
                    "apps": {"store": {"model": "quorum", "electionSeconds": 1.5, "probeInitialDelaySeconds": 2,
                                       "probePeriodSeconds": 1}}},
        "objects": [{
            "apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": "store", "annotations": {"rollwise.dev/update-policy": "QuorumAware"}},
            "spec": {"replicas": 4, "podManagementPolicy": "Parallel",
                     "updateStrategy": {"type": "OnDelete", "rollingUpdate": {"steps": canary}},
                     "selector": {"matchLabels": {"app": "store"}},
                     "template": {"metadata": {"labels": {"app": "store"}},
                                  "spec": {"containers": [{"name": "raft", "image": "store:1.0"}]}}},
        }],
        "steps": [{"waitFor": {"ready": "store", "timeout": 120}}, IMAGE_V2, *steps],
    }


def _run(raw: dict[str, Any]) -> tuple[Simulation, dict[str, Any], list[str]]:
    sim = Simulation(parse_scenario(raw))
    problems = judge_every_decision(sim)
    return sim, sim.run(), problems


def _set(sim: Simulation) -> dict[str, Any]:
    return sim.cluster.get("StatefulSet.apps.rollwise.dev", "default", "store")


def _at_update(sim: Simulation) -> list[str]:
    update = _set(sim)["status"]["updateRevision"]
    return sorted(p["metadata"]["name"] for p in sim.cluster.list("Pod", "default") if revision_of(p) == update)


def _leader(result: dict[str, Any]) -> str:
    return [e["pod"] for e in result["events"] if e["type"] == "LeaderChanged" and e.get("pod")][-1]


def test_an_indefinite_pause_holds_one_follower_at_the_new_revision() -> None:
    sim, result, problems = _run(_scenario([{"after": 3600}], [{"replicas": 1}, {"pause": {}}]))
    assert problems == [] and result["summary"]["store"]["writesWithoutChange"] == 0
    canary = _at_update(sim)
    assert len(canary) == 1 and canary[0] != _leader(result)
    status = _set(sim)["status"]
    assert status["currentStepIndex"] == 1 and status["stableRevision"] == status["currentRevision"]
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert progressing["message"].startswith("step 2 of 2 (pause until promoted)")


def test_promote_lets_the_rest_follow_the_leader_last() -> None:
    sim, result, problems = _run(_scenario(
        [{"after": 60}, {"promote": {"name": "store"}}, {"waitFor": {"rolloutComplete": "store", "timeout": 600}}],
        [{"replicas": 1}, {"pause": {}}]))
    assert problems == [] and result["summary"]["store"]["completed"]
    assert result["summary"]["store"]["quorumLossSeconds"] == 0
    deletes = [e for e in result["events"] if e["type"] == "PodDeleteRequested"]
    leader = next(e["pod"] for e in result["events"] if e["type"] == "LeaderChanged" and e.get("pod"))
    assert len(deletes) == 4 and deletes[-1]["pod"] == leader
    promoted = next(e["t"] for e in result["events"] if e["type"] == "Step" and "promote" in str(e))
    assert [e["t"] < promoted for e in deletes] == [True, False, False, False]  # one before promote, three after
    assert len(_at_update(sim)) == 4


def test_a_timed_pause_proceeds_by_itself() -> None:
    _, result, problems = _run(_scenario([{"waitFor": {"rolloutComplete": "store", "timeout": 600}}],
                                         [{"replicas": 2}, {"pause": {"duration": 30}}]))
    assert problems == [] and result["summary"]["store"]["completed"]
    deletes = [e["t"] for e in result["events"] if e["type"] == "PodDeleteRequested"]
    # Two members, then the 30 s pause, then the other two.
    assert deletes[2] - deletes[1] >= 30 > deletes[1] - deletes[0]


def test_an_abort_takes_the_canary_members_back_to_the_stable_revision() -> None:
    sim, result, problems = _run(_scenario(
        [{"after": 60}, {"abort": {"name": "store"}}, {"after": 120}], [{"replicas": 2}, {"pause": {}}]))
    assert problems == []
    status = _set(sim)["status"]
    stable = status["currentRevision"]
    assert status["abort"] is True and status["updateRevision"] == stable
    assert {revision_of(p) for p in sim.cluster.list("Pod", "default")} == {stable}
    deletes = [e["pod"] for e in result["events"] if e["type"] == "PodDeleteRequested"]
    assert len(deletes) == 4 and sorted(deletes[:2]) == sorted(deletes[2:])  # the two canaries, then back
    assert _leader(result) not in deletes  # the leader was never in the canary, so the abort leaves it be


def test_a_held_canary_writes_nothing_however_long_it_holds() -> None:
    writes = [_run(_scenario([{"after": held}], [{"replicas": 1}, {"pause": {}}]))[1]["apiWrites"]
              for held in (600, 3600)]
    assert writes[0] == writes[1]
