"""The disruption controller's decision: the status kube-controller-manager's ``disruption`` controller writes on a
PodDisruptionBudget (``pkg/controller/disruption/disruption.go``, ``updatePdbStatus``), so ``kubectl get pdb`` shows
ALLOWED DISRUPTIONS and a client that reads the status (``kubectl drain`` prints it) sees what the eviction
subresource decides. The count is ``api/disruption.budget_state``, the rule the StatefulSet controller and
``pods/eviction`` apply too."""

from __future__ import annotations

from typing import Any

from rollwise.api.conditions import merge_conditions
from rollwise.api.disruption import budget_state
from rollwise.api.meta import Obj

__all__ = ["budget_status"]


def budget_status(pdb: Obj, pods: list[Obj], scales: dict[str, int], now: float) -> dict[str, Any]:
    """The status the disruption controller writes, with its ``DisruptionAllowed`` condition; ``scales``: each
    controller's replicas by uid, for a budget in percent."""
    state = budget_state(pdb, pods, scales)
    old = pdb.get("status") or {}
    allowed = state.allowed > 0
    condition = {"type": "DisruptionAllowed", "status": "True" if allowed else "False",
                 "reason": "SufficientPods" if allowed else "InsufficientPods", "message": "",
                 "observedGeneration": int(pdb["metadata"].get("generation") or 1)}
    return {**old, "observedGeneration": int(pdb["metadata"].get("generation") or 1),
            "disruptionsAllowed": state.allowed, "currentHealthy": state.current_healthy,
            "desiredHealthy": state.desired_healthy, "expectedPods": state.expected,
            "conditions": merge_conditions(old.get("conditions") or [], [condition], now=now,
                                           owned=frozenset({"DisruptionAllowed"}))}
