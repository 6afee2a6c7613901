"""StatefulSet manifests and bounded explorations for the explorer's tests: strategy x podManagementPolicy."""

from __future__ import annotations

from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.explore import Bounds, Exploration, explore, initial_node
from rollwise.explore.controller import Decide
from rollwise.explore.model import perturbations_of

QUORUM = {"rollwise.dev/update-policy": "QuorumAware"}
STRATEGIES: dict[str, tuple[dict[str, Any], dict[str, str]]] = {
    "RollingUpdate": ({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, {}),
    "RollingUpdate-maxUnavailable-2": ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}, {}),
    "OnDelete": ({"type": "OnDelete"}, {}),
    "Recreate": ({"type": "Recreate"}, {}),
    "EnforcedRollingUpdate": ({"type": "EnforcedRollingUpdate"}, {}),
    "QuorumAware": ({"type": "OnDelete"}, QUORUM),
}
POLICIES = ("OrderedReady", "Parallel")


def manifest(strategy: dict[str, Any], policy: str = "OrderedReady", *, annotations: dict[str, str] | None = None,
             replicas: int = 3, when_scaled: str = "Delete", min_ready_seconds: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "podManagementPolicy": policy,
        "updateStrategy": strategy,
        "persistentVolumeClaimRetentionPolicy": {"whenScaled": when_scaled, "whenDeleted": "Retain"},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                  "spec": {"accessModes": ["ReadWriteOnce"],
                                           "resources": {"requests": {"storage": "1Gi"}}}}],
    }
    if min_ready_seconds:
        spec["minReadySeconds"] = min_ready_seconds
    meta: dict[str, Any] = {"name": "web"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta, "spec": spec}


def run(obj: dict[str, Any], *, replicas: int = 3, template_changes: int = 1, faults: int = 0, user_actions: int = 0,
        perturb: str = "", decide: Decide | None = None, max_states: int = 100_000, safety: str = "",
        read_your_writes: bool = True) -> Exploration:
    switches, depth = perturbations_of(s for s in perturb.split(",") if s)
    bounds = Bounds(replicas=replicas, template_changes=template_changes, faults=faults, user_actions=user_actions,
                    perturbations=switches, stale_depth=depth, read_your_writes=read_your_writes,
                    max_states=max_states, safety_actions=frozenset(s for s in safety.split(",") if s))
    return explore(initial_node(obj, gates=FeatureGates(), bounds=bounds), bounds, decide=decide)


def found(result: Exploration) -> dict[str, str]:
    """Invariant → message of each violation, so an assertion failure says what broke."""
    return {v.invariant: v.message for v in result.violations}
