"""Property tests: random scale/template changes and faults, checked against shared invariants at every reconcile."""

from __future__ import annotations

from typing import Any

import pytest
from hostile_status import hostile_statuses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from rollwise import invariants
from rollwise.api.meta import name_of
from rollwise.api.retention import retention_policy
from rollwise.controllers.plan import Plan
from rollwise.controllers.view import SetView
from rollwise.sim import Simulation, parse_scenario

IMAGES = ["app:v2", "app:v3", "app:typo", "app:crash", "app:unready"]
FAULTS = ["crash", "unready", "recover", "fail", "kill"]

template_change = st.builds(lambda img: {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {
    "template": {"spec": {"containers": [{"name": "app", "image": img}]}}}}}}, st.sampled_from(IMAGES))
step = st.one_of(
    st.builds(lambda r: {"scale": {"name": "web", "replicas": r}}, st.integers(0, 5)),
    template_change,
    st.builds(lambda o: {"deletePod": f"web-{o}"}, st.integers(0, 4)),
    st.builds(lambda o, f: {"podFault": {"pod": f"web-{o}", "fault": f}}, st.integers(0, 4), st.sampled_from(FAULTS)),
    st.builds(lambda s: {"after": s}, st.integers(1, 40)),
    # A pod status of any shape: refused like the API server refuses it, or accepted and survived.
    st.builds(lambda o, status: {"patch": {"kind": "Pod", "name": f"web-{o}", "merge": {"status": status}}},
              st.integers(0, 4), hostile_statuses),
)


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["RollingUpdate", "OnDelete", "Recreate", "EnforcedRollingUpdate"]))
    strategy: dict[str, Any] = {"type": kind}
    max_unavailable_gate = draw(st.booleans())
    if kind in ("RollingUpdate", "EnforcedRollingUpdate") and draw(st.integers(0, 3)):
        block: dict[str, Any] = {"partition": draw(st.integers(0, 3))}
        if max_unavailable_gate:  # with the gate off the field is refused, naming the gate
            block["maxUnavailable"] = draw(st.sampled_from([1, 2, 3, "50%"]))
        if draw(st.booleans()):
            block["podProgressTimeoutSeconds"] = draw(st.sampled_from([20, 60]))
        strategy["rollingUpdate" if kind == "RollingUpdate" else "enforcedRollingUpdate"] = block
    when_scaled, when_deleted = draw(st.sampled_from([("Retain", "Retain"), ("Delete", "Retain"),
                                                      ("Retain", "Delete"), ("Delete", "Delete")]))
    return {
        "name": "random",
        "kubelet": {"startSeconds": draw(st.sampled_from([0, 1, 5])), "readySeconds": draw(st.sampled_from([0, 2])),
                    "terminationSeconds": draw(st.sampled_from([0, 3])),
                    "images": {"app:typo": {"fail": "ImagePullBackOff"}, "app:crash": {"fail": "CrashLoopBackOff"},
                               "app:unready": {"ready": False}}},
        # Gates only ever off for RollingUpdate: a gated-off strategy is refused at admission, not simulated.
        "featureGates": {"MaxUnavailableStatefulSet": max_unavailable_gate},
        "objects": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {
                "replicas": draw(st.integers(1, 6)),
                "podManagementPolicy": draw(st.sampled_from(["OrderedReady", "Parallel"])),
                "minReadySeconds": draw(st.sampled_from([0, 0, 5])),
                "updateStrategy": strategy,
                "persistentVolumeClaimRetentionPolicy": {"whenScaled": when_scaled, "whenDeleted": when_deleted},
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}],
            },
        }],
        # Settle first, then always change the template once, so most examples exercise a rollout.
        "steps": [{"waitFor": {"ready": "web", "timeout": 120}}, draw(template_change),
                  *draw(st.lists(step, max_size=8)), {"after": 300}],
        "limitSeconds": 1500,
    }


@pytest.mark.parametrize("n", examples(50, 120))
def test_random_changes_and_faults_never_break_the_invariants(n: int) -> None:
    @settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(scenarios())
    def check(raw: dict[str, Any]) -> None:
        sim = Simulation(parse_scenario(raw))
        problems: list[str] = []
        claims_created: set[str] = set()

        def observe(view: SetView, plan: Plan) -> None:
            problems.extend(invariants.judge(invariants.Decision(view=view, actions=plan.actions)))
            problems.extend(invariants.one_pod_per_ordinal(sim.cluster.list("Pod")))
            claims_created.update(name_of(c) for c in sim.cluster.list("PersistentVolumeClaim"))

        sim.observers.append(observe)
        result = sim.run()
        lost = [e["claim"] for e in result["events"] if e["type"] == "PVCDeleted" and e.get("lost")]
        problems.extend(f"claim {c} deleted while its ordinal was in range or under Retain" for c in lost)
        problems.extend(invariants.one_pod_per_ordinal(sim.cluster.list("Pod")))
        if all(retention_policy(s) == ("Retain", "Retain") for s in sim.cluster.list("StatefulSet")):
            # Under Retain/Retain every claim ever created still exists, in range or not.
            present = {name_of(c) for c in sim.cluster.list("PersistentVolumeClaim")}
            problems.extend(invariants.claims_lost(claims_created, present, range(0), "Retain"))
        assert not problems, problems[:5]

    check()
