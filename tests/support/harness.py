"""A controller test harness in the style of upstream's fake object manager (reference §8 conventions).

The memory store is the fake; each ``sync()`` is one reconcile plus the execution of its plan. Tests move pods
through their lifecycle by hand (Pending -> Running -> Ready, terminating -> gone), so every intermediate state
can be inspected, as upstream's ``scaleUpStatefulSetControl`` loops do.
"""

from __future__ import annotations

import copy
from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.api.identity import ordinal_of, revision_of
from rollwise.api.meta import Obj, controller_of, name_of
from rollwise.api.predicates import is_running_and_ready, is_terminating
from rollwise.cluster.store.admission import Admission
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.runtime.execute import Outcome, execute
from rollwise.runtime.views import set_view

CONTROLLER = "statefulset-controller"


class Harness:
    def __init__(self, sts: Obj, *, gates: FeatureGates | None = None, now: float = 0.0) -> None:
        self.now = now
        self.gates = gates or FeatureGates()
        self.cluster = MemoryCluster(clock=lambda: self.now, admit=Admission(gates=self.gates).hooks())
        self.events: list[str] = []
        self.last: Outcome | None = None
        sts = copy.deepcopy(sts)
        for key in ("uid", "resourceVersion", "generation", "creationTimestamp"):
            sts["metadata"].pop(key, None)
        self.name = name_of(sts)
        self.cluster.create(sts)

    # -- driving the controller -------------------------------------------------------------------------------

    @property
    def sts(self) -> Obj:
        return self.cluster.get("StatefulSet", "default", self.name)

    def plan(self) -> Plan:
        return reconcile(set_view(self.cluster, self.sts, now=self.now, gates=self.gates))

    def sync(self) -> Plan:
        sts = self.sts
        plan = reconcile(set_view(self.cluster, sts, now=self.now, gates=self.gates))
        self.last = execute(plan, self.cluster, sts=sts, actor=CONTROLLER,
                            emit=lambda ev: self.events.append(f"{ev.reason}: {ev.message}"))
        return plan

    def patch_set(self, merge: dict[str, Any]) -> None:
        self.cluster.patch("StatefulSet", "default", self.name, merge)

    def set_image(self, image: str) -> None:
        containers = copy.deepcopy(self.sts["spec"]["template"]["spec"]["containers"])
        containers[0]["image"] = image
        self.patch_set({"spec": {"template": {"spec": {"containers": containers}}}})

    # -- pods -------------------------------------------------------------------------------------------------

    def pods(self) -> list[Obj]:
        uid = self.sts["metadata"]["uid"]
        owned = [p for p in self.cluster.list("Pod", "default") if (controller_of(p) or {}).get("uid") == uid]
        return sorted(owned, key=ordinal_of)

    def names(self) -> list[str]:
        return [name_of(p) for p in self.pods()]

    def pod(self, name: str) -> Obj:
        return self.cluster.get("Pod", "default", name)

    def set_status(self, name: str, *, phase: str, ready: bool = False) -> None:
        pod = self.pod(name)
        status: dict[str, Any] = {"phase": phase}
        if phase == "Running":
            prev = [c for c in (pod.get("status") or {}).get("conditions") or () if c["type"] == "Ready"]
            since = prev[0]["lastTransitionTime"] if prev and prev[0]["status"] == ("True" if ready else "False") \
                else self.now
            status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False",
                                     "lastTransitionTime": since}]
        self.cluster.update_status({**pod, "status": status})

    def make_ready(self, name: str) -> None:
        self.set_status(name, phase="Running", ready=True)

    def finish_termination(self, name: str) -> None:
        self.cluster.delete("Pod", "default", name, grace_period_seconds=0)

    def step_pods(self) -> None:
        """Move every pod one lifecycle step: terminating -> gone, else not ready -> Running and Ready."""
        for pod in self.pods():
            if is_terminating(pod):
                self.finish_termination(name_of(pod))
            elif not is_running_and_ready(pod):
                self.make_ready(name_of(pod))

    def settle(self, *, max_syncs: int = 200) -> int:
        """Sync and step pods until a sync changes nothing and every pod is Ready; returns the syncs used."""
        for n in range(1, max_syncs + 1):
            plan = self.sync()
            busy = any(is_terminating(p) or not is_running_and_ready(p) for p in self.pods())
            if not plan.actions and not busy:
                return n
            self.step_pods()
        raise AssertionError(f"did not settle in {max_syncs} syncs; pods: {self.names()}")

    def revisions(self) -> list[Obj]:
        return self.cluster.list("ControllerRevision", "default")

    def images(self) -> dict[str, str]:
        return {name_of(p): p["spec"]["containers"][0]["image"] for p in self.pods()}

    def pod_revisions(self) -> dict[str, str]:
        return {name_of(p): revision_of(p) for p in self.pods()}

    def status(self) -> dict[str, Any]:
        return self.sts.get("status") or {}
