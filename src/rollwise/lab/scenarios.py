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
from rollwise.kubelet.quorum_probe import quorum_options
from rollwise.lab.stores import LAB_STORES, LabStore, LabTimings
from rollwise.scenario.scenario import Scenario, parse_scenario
from rollwise.scenario.strategy_override import parse_strategy

__all__ = ["SCENARIOS", "STRATEGIES", "LabScenario", "LabStrategy", "LabTimings", "model_scenario", "set_manifest",
           "strategies_for"]

ETCD = LAB_STORES["etcd"]


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


def strategies_for(store: LabStore) -> dict[str, LabStrategy]:
    """The strategies a store's lab offers: leader transfer only where the store can hand over."""
    return {k: v for k, v in STRATEGIES.items() if k != "quorum-transfer" or store.runtime.can_transfer}


def set_manifest(scenario: LabScenario, strategy: LabStrategy, timings: LabTimings, store: LabStore = ETCD, *,
                 probe: bool = True) -> Obj:
    """The member StatefulSet: Parallel as etcd-druid runs it, one ``data`` claim per member; with ``probe``, the
    store's role probe (the model's members write Leases instead, so its set carries none)."""
    name = store.set_name
    base: Obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": scenario.replicas,
            "serviceName": f"{name}-peer",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"terminationGracePeriodSeconds": timings.grace_seconds,
                         "containers": [{"name": store.container, "image": store.images[0]}]},
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
    notes = {**strategy.annotations, **(store.probe if probe else {})}
    if notes:
        out["metadata"]["annotations"] = {**(out["metadata"].get("annotations") or {}), **notes}
    return out


def template_patch(store: LabStore = ETCD) -> Obj:
    return {"spec": {"template": {"spec": {"containers": [{"name": store.container, "image": store.images[1]}]}}}}


def model_scenario(scenario: LabScenario, strategy: LabStrategy, timings: LabTimings,
                   store: LabStore = ETCD) -> Scenario:
    """The same run in the simulator's quorum model, with the lab's timings and the store's parameters."""
    name = store.set_name
    steps: list[Any] = [{"waitFor": {"ready": name, "timeout": 120}}]
    steps += [{"podFault": {"pod": f"{name}-{o}", "fault": "crash"}} for o in scenario.down]
    steps += [{"after": timings.settle_seconds}, {"patch": {"kind": "StatefulSet", "name": name,
                                                         "merge": template_patch(store)}},
              {"waitFor": {"rolloutComplete": name, "timeout": 600}}]
    raw = {
        "name": f"lab-{scenario.name}",
        "description": scenario.description,
        "kubelet": {
            "startSeconds": timings.start_seconds,
            "readySeconds": timings.probe_initial_delay_seconds,
            "terminationSeconds": timings.termination_seconds,
            "apps": {name: {"model": "quorum", **quorum_options(timings.quorum_params())}},
        },
        "objects": [set_manifest(scenario, strategy, timings, store, probe=False)],
        "steps": steps,
    }
    parsed = parse_scenario(raw, source=f"lab {scenario.name}")
    return parsed.with_gates(strategy.gates).checked()
