"""The lab's scenarios and strategies, written once and rendered twice: as a real run and as a simulator scenario.

DEP-07's own story (seed 001 "Motivation"): 3 members, member 0 crash-looping when a template change arrives; and
the 5-member story of ``tests/scenarios/etcd-five-two-down.yaml``: two members down. Each under the StatefulSet
controller's RollingUpdate as Kubernetes 1.34-1.36 runs it (the MaxUnavailableStatefulSet gate off), as 1.37 runs
it (gate on), under DEP-07's QuorumAware order, and QuorumAware with quorum headroom
(``rollwise.dev/max-unavailable-members: auto``).

The timings are the lab's, on both sides: ``start_seconds`` of ContainerCreating before each process starts stands
for a pod's recreation on a node (the reference's "pod down" time, §3), and the readiness probe runs faster than
etcd-druid's 15 s / 5 s so a run takes seconds, not minutes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.meta import Obj
from rollwise.controllers.quorum import MAX_UNAVAILABLE_MEMBERS
from rollwise.scenario.scenario import Scenario, parse_scenario
from rollwise.scenario.strategy_override import parse_strategy

__all__ = ["SCENARIOS", "STRATEGIES", "LabScenario", "LabStrategy", "LabTimings", "model_scenario", "set_manifest"]

OLD_IMAGE, NEW_IMAGE = "etcd:3.5.1", "etcd:3.5.1-r1"


@dataclass(frozen=True, slots=True, kw_only=True)
class LabScenario:
    name: str
    replicas: int
    down: tuple[int, ...]  # ordinals crash-looping when the template changes
    description: str


@dataclass(frozen=True, slots=True, kw_only=True)
class LabStrategy:
    label: str
    strategy: str  # as for ``rollwise simulate --strategy``
    gates: Mapping[str, bool] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class LabTimings:
    start_seconds: float = 2.0  # ContainerCreating: the reference's 2 s "pod down" per restart
    probe_initial_delay_seconds: float = 0.0
    probe_period_seconds: float = 0.5
    probe_timeout_seconds: float = 0.5
    probe_failure_threshold: int = 1
    # The model's deletion-to-gone time. Measured here: etcd 3.5.1 leaves raft within ms of SIGTERM, then waits
    # ~1.0 s closing its peer listener before it exits (3.4.23 exited after 0.13-0.15 s, reference §0).
    termination_seconds: float = 1.0
    election_seconds: float = 1.0  # the model's election after a leader is lost (reference §0: 0.96-1.58 s)
    # The model's election once a restarted member restores quorum: measured here 0.48-1.35 s after its process
    # starts, 0.85 s on average (its boot, then etcd's randomised election timer, advanced for a booting member).
    join_election_seconds: float = 0.85
    heartbeat_seconds: float = 0.5  # member Lease renewal (druid: 10 s); the model lags the role by half of it
    settle_seconds: float = 3.0  # after the crash faults, before the template change
    grace_seconds: int = 10  # terminationGracePeriodSeconds of the member pods


SCENARIOS = {
    "dep07": LabScenario(name="dep07", replicas=3, down=(0,),
                         description="3 members, member 0 crash-looping, then a template change (seed 001)"),
    "five-two-down": LabScenario(name="five-two-down", replicas=5, down=(1, 3),
                                 description="5 members, members 1 and 3 crash-looping, then a template change"),
    "five": LabScenario(name="five", replicas=5, down=(),
                        description="5 healthy members, then a template change (the leader goes last)"),
}

STRATEGIES = {
    "legacy": LabStrategy(label="RollingUpdate (1.34-1.36)", strategy="RollingUpdate",
                          gates={"MaxUnavailableStatefulSet": False}),
    "rolling": LabStrategy(label="RollingUpdate (1.37)", strategy="RollingUpdate"),
    "quorum": LabStrategy(label="QuorumAware", strategy="QuorumAware"),
    "quorum-auto": LabStrategy(label="QuorumAware auto", strategy="QuorumAware",
                               annotations={MAX_UNAVAILABLE_MEMBERS: "auto"}),
    "quorum-transfer": LabStrategy(label="QuorumAware + leader transfer", strategy="QuorumAware:leaderTransfer=true"),
}


def set_manifest(scenario: LabScenario, strategy: LabStrategy, timings: LabTimings) -> Obj:
    """The member StatefulSet: Parallel as etcd-druid runs it, one ``data`` claim per member."""
    base: Obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "etcd", "namespace": "default"},
        "spec": {
            "replicas": scenario.replicas,
            "serviceName": "etcd-peer",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "etcd"}},
            "template": {
                "metadata": {"labels": {"app": "etcd"}},
                "spec": {"terminationGracePeriodSeconds": timings.grace_seconds,
                         "containers": [{"name": "etcd", "image": OLD_IMAGE}]},
            },
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                      "spec": {"accessModes": ["ReadWriteOnce"],
                                               "resources": {"requests": {"storage": "1Gi"}}}}],
        },
    }
    override, errors = parse_strategy(strategy.strategy)
    if override is None:
        raise ValueError(f"bad lab strategy {strategy.strategy!r}: {errors}")
    out = override.apply(base)
    if strategy.annotations:
        out["metadata"]["annotations"] = {**(out["metadata"].get("annotations") or {}), **strategy.annotations}
    return out


def template_patch() -> Obj:
    return {"spec": {"template": {"spec": {"containers": [{"name": "etcd", "image": NEW_IMAGE}]}}}}


def model_scenario(scenario: LabScenario, strategy: LabStrategy, timings: LabTimings) -> Scenario:
    """The same run in the simulator's quorum model, with the lab's timings."""
    steps: list[Any] = [{"waitFor": {"ready": "etcd", "timeout": 120}}]
    steps += [{"podFault": {"pod": f"etcd-{o}", "fault": "crash"}} for o in scenario.down]
    steps += [{"after": timings.settle_seconds}, {"patch": {"kind": "StatefulSet", "name": "etcd",
                                                         "merge": template_patch()}},
              {"waitFor": {"rolloutComplete": "etcd", "timeout": 600}}]
    raw = {
        "name": f"lab-{scenario.name}",
        "description": scenario.description,
        "kubelet": {
            "startSeconds": timings.start_seconds,
            "readySeconds": timings.probe_initial_delay_seconds,
            "terminationSeconds": timings.termination_seconds,
            "apps": {"etcd": {"model": "quorum", "electionSeconds": timings.election_seconds,
                              "joinElectionSeconds": timings.join_election_seconds,
                              "leaseLagSeconds": timings.heartbeat_seconds / 2,
                              "probeInitialDelaySeconds": timings.probe_initial_delay_seconds,
                              "probePeriodSeconds": timings.probe_period_seconds,
                              "probeFailureThreshold": timings.probe_failure_threshold}},
        },
        "objects": [set_manifest(scenario, strategy, timings)],
        "steps": steps,
    }
    parsed = parse_scenario(raw, source=f"lab {scenario.name}")
    return parsed.with_gates(strategy.gates).checked()
