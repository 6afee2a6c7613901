"""The disruption controller of `rollwise up`: each PodDisruptionBudget's status, as kube-controller-manager's
``disruption`` controller writes it, so ``kubectl get pdb`` shows ALLOWED DISRUPTIONS and a client that reads the
status (``kubectl drain`` prints it) sees what the eviction subresource decides.

A change to a pod or a budget marks its namespace dirty; on the next loop turn every budget of a dirty namespace
gets its status recomputed (``api/disruption.budget_state``, the rule the StatefulSet controller and
``pods/eviction`` apply) and written, as ``disruption-controller``, when it changed. The eviction subresource does not
wait for this status: it computes the allowance afresh (apiserver/eviction.py), so there is nothing to go stale.
"""

from __future__ import annotations

import asyncio
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


class DisruptionController:
    """``start()`` on the running loop, ``stop()`` before the store closes."""

    def __init__(self, cluster: MemoryCluster, *, listen: Callable[[Callable[[Change], None]], None],
                 pump: Callable[[], None], clock: Callable[[], float]) -> None:
        self.cluster = cluster
        self.pump = pump
        self.clock = clock
        self._dirty: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scheduled = False
        listen(self._on_change)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        for pdb in self.cluster.list(PDB):
            self._mark(namespace_of(pdb))

    def stop(self) -> None:
        self._loop = None

    def _on_change(self, ch: Change) -> None:
        if self._loop is None or ch.actor == ACTOR:
            return
        gk = self.cluster.resources.of(ch.obj)
        if gk in (POD, PDB):
            self._mark(namespace_of(ch.obj))

    def _mark(self, namespace: str) -> None:
        self._dirty.add(namespace)
        if not self._scheduled and self._loop is not None:
            self._scheduled = True
            self._loop.call_soon(self._drain)

    def _drain(self) -> None:
        self._scheduled = False
        namespaces, self._dirty = self._dirty, set()
        for namespace in sorted(namespaces):
            budgets = self.cluster.list(PDB, namespace)
            if not budgets or self._loop is None:
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
        self.pump()
