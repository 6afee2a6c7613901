"""The scheduler loop of `rollwise up`: it binds the pods no node could take at creation once one can (a node
uncordoned, a taint removed, a label added), as kube-scheduler retries its unschedulable queue when nodes change.

Admission makes the first attempt (apiserver/admission/plugins.py ``schedule``), so a pod that fits is bound at creation
and this loop has nothing to do for it. A pod left Pending (PodScheduled False, Unschedulable) is tried again on the
next loop turn after any change to a node or to the pod; when a node takes it the pod gets ``spec.nodeName`` (the
binding) and PodScheduled True as ``default-scheduler``, and the kubelet starts it from then. While none does, its
message is rewritten only when it changes. The rules are ``api/scheduling.py``'s.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj, deletion_timestamp
from rollwise.api.scheduling import choose_node, unschedulable_status, unscheduled
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import NODE, POD
from rollwise.local.loop_turn import LoopTurn

__all__ = ["ACTOR", "Scheduler"]

log = logging.getLogger("rollwise.scheduler")

ACTOR = "default-scheduler"


def _waiting(pod: Obj) -> bool:
    return unscheduled(pod) and not (pod.get("spec") or {}).get("nodeName") and deletion_timestamp(pod) is None


class Scheduler(LoopTurn):
    """``start()`` on the running loop, ``stop()`` before the store closes."""

    actor = ACTOR

    def _changed(self, ch: Change) -> None:
        gk = self.cluster.resources.of(ch.obj)
        if gk == NODE or (gk == POD and ch.type != "DELETED" and _waiting(ch.obj)):
            self._soon()

    def _turn(self) -> None:
        waiting = [p for p in self.cluster.list(POD) if _waiting(p)]
        if not waiting:
            return
        nodes = self.cluster.list(NODE)
        running = Counter(str((p.get("spec") or {}).get("nodeName")) for p in self.cluster.list(POD))
        for pod in waiting:
            node, message = choose_node(pod, nodes, running)
            try:
                if node is None:
                    status = unschedulable_status(pod.get("status") or {}, message, self.clock())
                    if status != pod.get("status"):
                        self.cluster.update_status({**pod, "status": status}, actor=ACTOR)
                    continue
                bound = self.cluster.update({**pod, "spec": {**pod["spec"], "nodeName": node}}, actor=ACTOR)
                self.cluster.update_status({**bound, "status": _scheduled(bound.get("status") or {}, self.clock())},
                                           actor=ACTOR)
                running[node] += 1
            except ApiStatusError as err:  # changed or deleted meanwhile: its change marks it again
                log.debug("%s: pod %s not scheduled now: %s", ACTOR, pod["metadata"]["name"], err)


def _scheduled(status: dict[str, Any], now: float) -> dict[str, Any]:
    """PodScheduled True from now; the kubelet keeps that transition time and starts the pod from it."""
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict) and c.get("type") != "PodScheduled"]
    return {**status, "conditions": [*conditions, {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                                   "lastTransitionTime": now}]}
