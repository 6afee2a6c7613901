"""Property test: over random member faults, the quorum-aware controller keeps DEP-07's promises."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from rollwise.api import predicates as p
from rollwise.api.identity import revision_of
from rollwise.api.meta import name_of
from rollwise.controllers.plan import DeletePod, Plan
from rollwise.controllers.view import SetView
from rollwise.sim import Simulation, parse_scenario

FAULTS = ["crash", "kill", "recover", "fail", "unready"]


def participating(pod: dict[str, Any]) -> bool:
    return any(cs.get("ready") for cs in (pod.get("status") or {}).get("containerStatuses") or ())


@st.composite
def quorum_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    replicas = draw(st.sampled_from([1, 3, 5]))
    pod = st.integers(0, replicas - 1).map(lambda o: f"etcd-{o}")
    fault = st.builds(lambda name, f: {"podFault": {"pod": name, "fault": f}}, pod, st.sampled_from(FAULTS))
    image = st.sampled_from(["etcd:v2", "etcd:v3", "etcd:crash"]).map(lambda img: {"patch": {
        "kind": "StatefulSet", "name": "etcd",
        "merge": {"spec": {"template": {"spec": {"containers": [{"name": "etcd", "image": img}]}}}}}})
    pause = st.integers(1, 30).map(lambda s: {"after": s})
    scale = st.integers(0, 5).map(lambda r: {"scale": {"name": "etcd", "replicas": r}})
    steps = draw(st.lists(st.one_of(fault, pause, image, scale), max_size=8))
    retention = {"whenScaled": draw(st.sampled_from(["Delete", "Retain"])),
                 "whenDeleted": draw(st.sampled_from(["Delete", "Retain"]))}
    return {
        "name": "quorum-random",
        "kubelet": {"startSeconds": draw(st.sampled_from([1, 3])), "readySeconds": 1,
                    "terminationSeconds": draw(st.sampled_from([0, 2])),
                    "images": {"etcd:crash": {"fail": "CrashLoopBackOff"}},
                    "apps": {"etcd": {"model": "quorum", "probeInitialDelaySeconds": draw(st.sampled_from([1, 5])),
                                      "probePeriodSeconds": 2,
                                      "leaseLagSeconds": draw(st.sampled_from([0, 5]))}}},
        "objects": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "etcd", "annotations": {"rollwise.dev/update-policy": "QuorumAware"}},
            "spec": {"replicas": replicas, "podManagementPolicy": "Parallel", "updateStrategy": {"type": "OnDelete"},
                     "selector": {"matchLabels": {"app": "etcd"}},
                     "persistentVolumeClaimRetentionPolicy": retention,
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}],
                     "template": {"metadata": {"labels": {"app": "etcd"}},
                                  "spec": {"containers": [{"name": "etcd", "image": "etcd:v1"}]}}},
        }],
        "steps": [{"waitFor": {"ready": "etcd", "timeout": 60}}, draw(image), *steps, {"after": 200}],
        "limitSeconds": 1200,
    }


def dep07_promises(view: SetView, plan: Plan) -> list[str]:
    """One deletion per reconcile; never a participating member while an updated member is not participating."""
    deletes = plan.of_type(DeletePod)
    problems = []
    if len(deletes) > 1:
        problems.append(f"t={view.now}: {len(deletes)} deletions in one reconcile")
    update = (view.set.get("status") or {}).get("updateRevision")
    pods = {name_of(pod): pod for pod in view.pods}
    waiting = [name for name, pod in pods.items()
               if revision_of(pod) == update and not p.is_terminating(pod) and not participating(pod)]
    for d in deletes:
        pod = pods.get(d.name)
        if pod is not None and participating(pod) and waiting:
            problems.append(f"t={view.now}: deleted participating {d.name} while {waiting} not participating")
    return problems


@pytest.mark.parametrize("n", examples(25, 60))
def test_quorum_aware_controller_keeps_dep07_promises_under_random_faults(n: int) -> None:
    @settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(quorum_scenarios())
    def check(raw: dict[str, Any]) -> None:
        sim = Simulation(parse_scenario(raw))
        problems: list[str] = []
        sim.quorum_observers.append(lambda view, plan: problems.extend(dep07_promises(view, plan)))
        result = sim.run()
        assert not problems, problems[:5]
        assert result["summary"]["etcd"]["claimsLost"] == 0, [e for e in result["events"] if e.get("lost")]

    check()


@pytest.mark.parametrize("n", examples(15, 40))
def test_quorum_aware_rollout_completes_once_faults_stop(n: int) -> None:
    @settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(quorum_scenarios())
    def check(raw: dict[str, Any]) -> None:
        """Liveness: whatever came before, once every member recovers and a good template is applied, the quorum-aware
        controller brings every member to it within a bound of virtual time."""
        healed = [{"podFault": {"pod": f"etcd-{o}", "fault": "recover"}} for o in range(5)]
        final = {"patch": {"kind": "StatefulSet", "name": "etcd", "merge": {"spec": {"template": {"spec": {
            "containers": [{"name": "etcd", "image": "etcd:final"}]}}}}}}
        raw = {**raw, "steps": [*raw["steps"][:-1], *healed, final, {"after": 900}], "limitSeconds": 20000}
        result = Simulation(parse_scenario(raw)).run()
        assert result["summary"]["etcd"]["completed"], result["final"]["pods"]
        assert result["summary"]["etcd"]["claimsLost"] == 0
        assert not [p["name"] for p in result["final"]["pods"] if p["terminating"]], result["final"]["pods"]

    check()
