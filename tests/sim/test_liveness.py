"""Liveness: whatever faults and changes came before, once faults stop and the template is good, the rollout
completes within a bound of virtual time — for every strategy that promises to get there by itself, under both pod
management policies. And the summary's figures agree with the event stream they summarise."""

from __future__ import annotations

from typing import Any

import pytest
from event_figures import figures_from_events
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from judged import judge_every_decision
from tiers import examples

from rollwise.sim import Simulation, parse_scenario

MAX_REPLICAS = 4
GOOD = ["app:v2", "app:v3"]
BROKEN = ["app:typo", "app:crash", "app:unready"]
FAULTS = ["crash", "unready", "recover", "fail", "kill"]
FINAL_IMAGE = "app:final"
SETTLE_BOUND_SECONDS = 900.0
"""Time the rollout gets once faults stop: a few pods' start, readiness and minReadySeconds each, with room for
OrderedReady's one-at-a-time pace; far less than a crash loop's 300 s back-off would need if it were waited out."""


def _patch_image(image: str) -> dict[str, Any]:
    return {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {
        "template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}}}


def _strategy(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": kind}
    if kind in ("RollingUpdate", "EnforcedRollingUpdate") and draw(st.booleans()):
        block = {"maxUnavailable": draw(st.sampled_from([1, 2, "50%"]))}
        strategy["rollingUpdate" if kind == "RollingUpdate" else "enforcedRollingUpdate"] = block
    return strategy


def _recovers_from_broken_templates(kind: str, policy: str) -> bool:
    """OrderedReady RollingUpdate waits for ever on a broken pod, even after the fix (upstream #67250, by design)."""
    return not (kind == "RollingUpdate" and policy == "OrderedReady")


@st.composite
def fault_histories(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["RollingUpdate", "Recreate", "EnforcedRollingUpdate"]))
    policy = draw(st.sampled_from(["OrderedReady", "Parallel"]))
    images = GOOD + (BROKEN if _recovers_from_broken_templates(kind, policy) else [])
    pod = st.integers(0, MAX_REPLICAS - 1).map(lambda o: f"web-{o}")
    step = st.one_of(
        st.builds(lambda name, f: {"podFault": {"pod": name, "fault": f}}, pod, st.sampled_from(FAULTS)),
        st.builds(lambda name: {"deletePod": name}, pod),
        st.builds(lambda r: {"scale": {"name": "web", "replicas": r}}, st.integers(0, MAX_REPLICAS)),
        st.sampled_from(images).map(_patch_image),
        st.integers(1, 40).map(lambda s: {"after": s}),
    )
    history = draw(st.lists(step, max_size=10))
    healed = [{"podFault": {"pod": f"web-{o}", "fault": "recover"}} for o in range(MAX_REPLICAS)]
    replicas = draw(st.integers(1, MAX_REPLICAS - 1))
    return {
        "name": "faults-then-calm",
        "kubelet": {"startSeconds": draw(st.sampled_from([0, 2])), "readySeconds": draw(st.sampled_from([0, 1])),
                    "terminationSeconds": draw(st.sampled_from([0, 3])),
                    "images": {"app:typo": {"fail": "ImagePullBackOff"}, "app:crash": {"fail": "CrashLoopBackOff"},
                               "app:unready": {"ready": False}}},
        "objects": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {
                "replicas": replicas,
                "podManagementPolicy": policy,
                "minReadySeconds": draw(st.sampled_from([0, 3])),
                "updateStrategy": _strategy(draw, kind),
                "persistentVolumeClaimRetentionPolicy": {"whenScaled": draw(st.sampled_from(["Retain", "Delete"]))},
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}],
            },
        }],
        "steps": [{"waitFor": {"ready": "web", "timeout": 60}}, *history, *healed,
                  _patch_image(FINAL_IMAGE), {"after": SETTLE_BOUND_SECONDS}],
        "limitSeconds": 20000,
    }


def _broken_pod_spends_the_budget() -> dict[str, Any]:
    """Parallel, budget 1: web-1 is replaced at a broken revision while unready, and its unavailability spends the
    budget the healthy pods above it need; only replacing web-1 itself (at the current revision) unsticks it."""
    return {
        "name": "faults-then-calm",
        "kubelet": {"startSeconds": 0, "readySeconds": 0, "terminationSeconds": 0,
                    "images": {"app:typo": {"fail": "ImagePullBackOff"}}},
        "objects": [{
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": 3, "podManagementPolicy": "Parallel", "minReadySeconds": 0,
                     "updateStrategy": {"type": "RollingUpdate"},
                     "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]},
        }],
        "steps": [{"waitFor": {"ready": "web", "timeout": 60}},
                  {"podFault": {"pod": "web-1", "fault": "crash"}}, {"deletePod": "web-0"}, _patch_image("app:typo"),
                  {"after": 1}, *[{"podFault": {"pod": f"web-{o}", "fault": "recover"}} for o in range(3)],
                  _patch_image(FINAL_IMAGE), {"after": SETTLE_BOUND_SECONDS}],
        "limitSeconds": 20000,
    }


def _both_pods_exactly_min_ready_at_the_change() -> dict[str, Any]:
    """minReadySeconds 3; web-0 (deleted, recreated) and web-1 both turn Ready at 3.001 and the template changes at
    6.001, the very instant both have been Ready for exactly minReadySeconds: neither is available yet."""
    raw = _broken_pod_spends_the_budget()
    spec = raw["objects"][0]["spec"]
    spec.update(replicas=2, podManagementPolicy="OrderedReady", minReadySeconds=3)
    raw["steps"] = [{"waitFor": {"ready": "web", "timeout": 60}}, {"deletePod": "web-0"}, {"after": 1}, {"after": 2},
                    _patch_image(FINAL_IMAGE), {"after": SETTLE_BOUND_SECONDS}]
    return raw


@pytest.mark.parametrize("n", examples(60, 150))
def test_rollout_completes_once_faults_stop_and_the_template_is_good(n: int) -> None:
    @settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(fault_histories())
    @example(_broken_pod_spends_the_budget())
    @example(_both_pods_exactly_min_ready_at_the_change())
    def check(raw: dict[str, Any]) -> None:
        sim = Simulation(parse_scenario(raw))
        problems = judge_every_decision(sim)
        result = sim.run()
        assert not problems, problems[:5]
        web = result["summary"]["web"]
        pods = result["final"]["pods"]
        assert web["completed"], (web, pods, [e for e in result["events"] if e["type"] == "Event"][-5:])
        assert web["claimsLost"] == 0
        assert not [p["name"] for p in pods if p["terminating"]], pods
        observed, seconds = figures_from_events(raw, result["events"], "web", end=result["endedAt"])
        assert web["maxUnavailableObserved"] == observed
        # The summary samples at instants; a pod passing minReadySeconds is seen 1 ms later, at the requeue.
        assert web["unavailablePodSeconds"] == pytest.approx(seconds, abs=0.01 * (1 + web["podCreations"]))

    check()
