"""The scheduler of `rollwise up`: it binds the pods no node could take at creation once one can (a node
uncordoned, a taint removed, a label added), as kube-scheduler retries its unschedulable queue when nodes change.

Admission makes the first attempt (apiserver/admission/plugins.py ``schedule``), so a pod that fits is bound at
creation and the scheduler has nothing to do for it. A pod left Pending (PodScheduled False, Unschedulable) is tried
again after any change to a node or to the pod: one key, the unschedulable queue, on the runtime's controller host
(``runtime/host.py``), so changes coalesce into one pass and its own writes wake nothing. When a node takes it the
pod gets ``spec.nodeName`` (the binding) and PodScheduled True as ``default-scheduler``, and the kubelet starts it
from then. While none does, its message is rewritten only when it changes. A pod with scheduling gates is not tried
(PodScheduled False, SchedulingGated); the update that removes its last gate wakes the queue, as upstream's
SchedulingGates plugin moves the pod to the active queue once its gates are gone. The rules are ``api/scheduling.py``'s.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj, deletion_timestamp
from rollwise.api.scheduling import placement, unscheduled
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import NODE, POD
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.runtime.clock import Clock
from rollwise.runtime.host import ControllerHost

__all__ = ["ACTOR", "Scheduler"]

log = logging.getLogger("rollwise.scheduler")

ACTOR = "default-scheduler"
_QUEUE = "unschedulable"
"""The one key: a pass schedules every waiting pod, counting the pods each node runs as it binds."""


def _waiting(pod: Obj) -> bool:
    return unscheduled(pod) and not (pod.get("spec") or {}).get("nodeName") and deletion_timestamp(pod) is None


class Scheduler:
    """``start()`` on the running loop (``clock``'s timers are the loop's), ``stop()`` before the store closes;
    ``on_change`` is given every change of the store's feed."""

    def __init__(self, cluster: MemoryCluster, *, clock: Clock, pump: Callable[[], None]) -> None:
        self.cluster = cluster
        self.clock = clock
        self.host: ControllerHost[str] = ControllerHost(ACTOR, clock=clock, inline=self._pass, after_each=pump)
        self._started = False

    def start(self) -> None:
        self._started = True
        self.host.wake(_QUEUE)

    def stop(self) -> None:
        self._started = False
        self.host.stop()

    def on_change(self, ch: Change) -> None:
        if not self._started or ch.actor == ACTOR:
            return
        gk = ch.resource
        if gk == NODE or (gk == POD and ch.type != "DELETED" and _waiting(ch.obj)):
            self.host.wake(_QUEUE)

    def _pass(self, _key: str) -> tuple[float | None, bool]:
        waiting = [p for p in self.cluster.list(POD) if _waiting(p)]
        if not waiting:
            return None, False
        nodes = self.cluster.list(NODE)
        running = Counter(str((p.get("spec") or {}).get("nodeName")) for p in self.cluster.list(POD))
        for pod in waiting:
            node, status = placement(pod, nodes, running, self.clock.now())
            try:
                if node is None:
                    if status != pod.get("status"):
                        self.cluster.update_status({**pod, "status": status}, actor=ACTOR)
                    continue
                bound = self.cluster.update({**pod, "spec": {**pod["spec"], "nodeName": node}}, actor=ACTOR)
                self.cluster.update_status({**bound, "status": _scheduled(bound.get("status") or {},
                                                                         self.clock.now())}, actor=ACTOR)
                running[node] += 1
            except ApiStatusError as err:  # changed or deleted meanwhile: its change marks it again
                log.debug("%s: pod %s not scheduled now: %s", ACTOR, pod["metadata"]["name"], err)
        return None, False


def _scheduled(status: dict[str, Any], now: float) -> dict[str, Any]:
    """PodScheduled True from now; the kubelet keeps that transition time and starts the pod from it."""
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict) and c.get("type") != "PodScheduled"]
    return {**status, "conditions": [*conditions, {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                                   "lastTransitionTime": now}]}
