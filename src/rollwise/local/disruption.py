"""The disruption controller of `rollwise up`: each PodDisruptionBudget's status, as kube-controller-manager's
``disruption`` controller writes it, so ``kubectl get pdb`` shows ALLOWED DISRUPTIONS and a client that reads the
status (``kubectl drain`` prints it) sees what the eviction subresource decides.

A change to a pod or a budget marks its namespace dirty; on the next loop turn every budget of a dirty namespace
gets its status recomputed (``api/disruption.budget_state``, the rule the StatefulSet controller and
``pods/eviction`` apply) and written, as ``disruption-controller``, when it changed. The eviction subresource does not
wait for this status: it computes the allowance afresh (apiserver/serving/eviction.py), so there is nothing to go stale.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from rollwise.api.conditions import merge_conditions
from rollwise.api.disruption import budget_state
from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj, namespace_of, uid_of
from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import POD, GroupKind
from rollwise.local.loop_turn import LoopTurn
from rollwise.runtime.setkeys import all_sets

__all__ = ["ACTOR", "PDB", "DisruptionController", "budget_status"]

log = logging.getLogger("rollwise.disruption")

PDB = GroupKind("policy", "PodDisruptionBudget")
ACTOR = "disruption-controller"


def budget_status(pdb: Obj, pods: list[Obj], scales: dict[str, int], now: float) -> dict[str, Any]:
    """The status the disruption controller writes (``updatePdbStatus``), with its ``DisruptionAllowed`` condition."""
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


class DisruptionController(LoopTurn):
    """``start()`` on the running loop, ``stop()`` before the store closes."""

    actor = ACTOR

    def __init__(self, cluster: MemoryCluster, *, listen: Callable[[Callable[[Change], None]], None],
                 pump: Callable[[], None], clock: Callable[[], float]) -> None:
        self._dirty: set[str] = set()
        super().__init__(cluster, listen=listen, pump=pump, clock=clock)

    def _started(self) -> None:
        for pdb in self.cluster.list(PDB):
            self._mark(namespace_of(pdb))

    def _changed(self, ch: Change) -> None:
        gk = self.cluster.resources.of(ch.obj)
        if gk in (POD, PDB):
            self._mark(namespace_of(ch.obj))

    def _mark(self, namespace: str) -> None:
        self._dirty.add(namespace)
        self._soon()

    def _turn(self) -> None:
        namespaces, self._dirty = self._dirty, set()
        for namespace in sorted(namespaces):
            budgets = self.cluster.list(PDB, namespace)
            if not budgets or not self.running:
                continue
            pods = self.cluster.list(POD, namespace)
            scales = {uid_of(s): int(s["spec"].get("replicas", 1)) for s in all_sets(self.cluster, namespace)}
            for pdb in budgets:
                status = budget_status(pdb, pods, scales, self.clock())
                if status == (pdb.get("status") or {}):
                    continue
                try:
                    self.cluster.update_status({**pdb, "status": status}, actor=ACTOR)
                except ApiStatusError as err:  # deleted or changed meanwhile: its change marks it again
                    log.debug("%s: status of %s not written: %s", ACTOR, pdb["metadata"]["name"], err)
