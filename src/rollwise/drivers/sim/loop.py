"""The simulation loop: the memory store, the simulated kubelet, scenario steps and the controllers in virtual time.

The controller reacts the way an informer-driven controller does: every change to a set or one of its pods
marks the set dirty, and each dirty set is reconciled once per round at that instant (changes coalesce, and the
controller's own writes are seen in the next round, still at the same instant: reaction latency is zero). A
controller that asks to be requeued (minReadySeconds) or fails (backoff) is woken by a timer.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api import predicates as p
from rollwise.api.defaults import apply_defaults
from rollwise.api.errors import Invalid, NotFound
from rollwise.api.identity import revision_of
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches, uid_of
from rollwise.api.validation import validate_statefulset
from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change
from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.drivers.execute import ControllerEvent, execute
from rollwise.drivers.metrics import MetricsRegistry
from rollwise.drivers.sim.engine import CONTROLLER, KUBELET, STEP, Engine
from rollwise.drivers.sim.record import Recorder
from rollwise.drivers.sim.scenario import Scenario
from rollwise.drivers.sim.steps import StepRunner
from rollwise.drivers.views import set_view
from rollwise.kubelet.agent import PodRuntime, advance, apply_fault

__all__ = ["STATEFULSET_CONTROLLER", "Simulation"]

STATEFULSET_CONTROLLER = "statefulset-controller"
_BACKOFF_START = 0.005
_BACKOFF_MAX = 1000.0
_MAX_ROUNDS_PER_INSTANT = 200

SetKey = tuple[str, str]


@dataclass(slots=True)
class _Kubelet:
    runtimes: dict[str, PodRuntime] = field(default_factory=dict)
    wake: dict[str, tuple[float, int]] = field(default_factory=dict)
    where: dict[str, tuple[str, str]] = field(default_factory=dict)


class Simulation:
    """One run of one scenario. ``run()`` returns the result document (spec/simulate.md)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.engine = Engine()
        self.clock = self.engine.clock
        self.cluster = MemoryCluster(clock=self.clock, admit={"StatefulSet": self._admit_set})
        self.recorder = Recorder(controllers=frozenset({STATEFULSET_CONTROLLER}))
        self.kubelet = _Kubelet()
        self._cursor = 0
        self._dirty_scheduled: set[SetKey] = set()
        self._rounds: dict[SetKey, tuple[float, int]] = {}
        self._timers: dict[SetKey, tuple[float, int]] = {}
        self._backoff: dict[SetKey, float] = {}
        self._event_seq = 0
        self.steps = StepRunner(self)
        self.metrics = MetricsRegistry()
        self.observers: list[Callable[[SetView, Plan], None]] = []
        """Called with every view and the plan decided from it, before execution (tests check invariants here)."""

    # -- admission: what the API server does with a StatefulSet ---------------------------------------------

    def _admit_set(self, new: Obj, old: Obj | None) -> Obj:
        defaulted = apply_defaults(new, gates=self.scenario.gates)
        errors = validate_statefulset(defaulted, old=old, gates=self.scenario.gates)
        if errors:
            raise Invalid(f"StatefulSet.apps \"{name_of(new)}\" is invalid: " + "; ".join(map(str, errors)),
                          errors=errors)
        return defaulted

    # -- running ---------------------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        for obj in self.scenario.objects:
            self.cluster.create(copy.deepcopy(obj), actor="user")
        self._drain()
        self.engine.at(0.0, STEP, self.steps.resume)
        limit = self.scenario.limit_seconds
        end = 0.0
        while True:
            t = self.engine.next_time()
            if t is None:  # idle: nothing scheduled after the last step
                end = self.clock.now
                break
            if t > limit:
                end = limit
                break
            self.engine.run_instant(self._drain)
            self._end_of_instant()
        return self._result(end)

    def _end_of_instant(self) -> None:
        sets = self.cluster.list("StatefulSet")
        self.recorder.sample(self.clock.now, sets, self._pods_by_set(sets))
        self.steps.check_wait()

    def _pods_by_set(self, sets: list[Obj]) -> dict[str, list[Obj]]:
        uid_to_name = {uid_of(s): name_of(s) for s in sets}
        out: dict[str, list[Obj]] = {name_of(s): [] for s in sets}
        for pod in self.cluster.list("Pod"):
            ref = controller_of(pod)
            if ref is not None and ref.get("uid") in uid_to_name:
                out[uid_to_name[ref["uid"]]].append(pod)
        return out

    # -- the change feed -------------------------------------------------------------------------------------

    def _drain(self) -> None:
        changes, self._cursor = self.cluster.changes_since(self._cursor)
        for ch in changes:
            self.recorder.on_change(ch)
            if ch.kind == "Pod":
                self._pod_changed(ch)
            elif ch.kind == "StatefulSet":
                if ch.type != "DELETED":
                    self.metrics.observe_set(ch.old, ch.obj, ch.at)
                self._mark_dirty((ch.namespace, ch.name))
        self.cluster.compact(self._cursor)

    def _pod_changed(self, ch: Change) -> None:
        uid = uid_of(ch.obj)
        if ch.type == "DELETED":
            self.kubelet.runtimes.pop(uid, None)
            self.kubelet.where.pop(uid, None)
            wake = self.kubelet.wake.pop(uid, None)
            if wake is not None:
                self.engine.cancel(wake[1])
        elif ch.actor != "kubelet":
            self.kubelet.where[uid] = (ch.namespace, ch.name)
            self.engine.at(self.clock.now, KUBELET, lambda: self._kubelet_tick(uid))
        for key in self._owners_of(ch.obj, ch.old):
            self._mark_dirty(key)

    def _owners_of(self, pod: Obj, old: Obj | None) -> set[SetKey]:
        """The sets to wake for a pod change: its controller (old and new), or every set whose selector matches an
        orphan (reference §5.1)."""
        keys: set[SetKey] = set()
        ns = namespace_of(pod)
        for obj in (pod, old):
            if obj is None:
                continue
            ref = controller_of(obj)
            if ref is not None and ref.get("kind") == "StatefulSet":
                keys.add((ns, ref["name"]))
            elif ref is None:
                for sts in self.cluster.list("StatefulSet", ns):
                    if selector_matches(sts["spec"].get("selector"), labels(obj)):
                        keys.add((ns, name_of(sts)))
        return keys

    # -- the kubelet -----------------------------------------------------------------------------------------

    def _kubelet_tick(self, uid: str) -> None:
        where = self.kubelet.where.get(uid)
        if where is None:
            return
        try:
            pod = self.cluster.get("Pod", *where)
        except NotFound:
            return
        if uid_of(pod) != uid:
            return
        runtime = self.kubelet.runtimes.get(uid) or PodRuntime.initial()
        step = advance(pod, runtime, self.scenario.kubelet, self.clock.now)
        self.kubelet.runtimes[uid] = step.runtime
        if step.status is not None:
            self.cluster.update_status({**pod, "status": step.status}, actor="kubelet")
        if step.remove:
            self.cluster.delete("Pod", *where, grace_period_seconds=0, actor="kubelet")
            return
        current = self.kubelet.wake.get(uid)
        if current is not None and current[0] != step.wake_at:
            self.engine.cancel(current[1])
            current = None
        if step.wake_at is not None and current is None:
            handle = self.engine.at(step.wake_at, KUBELET, lambda: self._kubelet_wake(uid))
            self.kubelet.wake[uid] = (step.wake_at, handle)

    def _kubelet_wake(self, uid: str) -> None:
        self.kubelet.wake.pop(uid, None)
        self._kubelet_tick(uid)

    def pod_fault(self, pod_name: str, fault: str, namespace: str = "default") -> bool:
        """Apply a scenario fault to the pod object of that name now; False if there is no such pod."""
        try:
            pod = self.cluster.get("Pod", namespace, pod_name)
        except NotFound:
            return False
        uid = uid_of(pod)
        runtime = self.kubelet.runtimes.get(uid) or PodRuntime.initial()
        self.kubelet.runtimes[uid] = apply_fault(pod, runtime, fault, self.clock.now)
        self.kubelet.where[uid] = (namespace, pod_name)
        self._kubelet_tick(uid)
        return True

    # -- the controller --------------------------------------------------------------------------------------

    def _mark_dirty(self, key: SetKey) -> None:
        if key in self._dirty_scheduled:
            return
        t = self.clock.now
        at_t, rounds = self._rounds.get(key, (t, 0))
        rounds = rounds + 1 if at_t == t else 1
        self._rounds[key] = (t, rounds)
        if rounds > _MAX_ROUNDS_PER_INSTANT:
            raise RuntimeError(f"StatefulSet {key[1]} did not settle at t={t}: {rounds} reconciles in one instant")
        self._dirty_scheduled.add(key)
        self.engine.at(t, CONTROLLER, lambda: self._reconcile(key))

    def _reconcile(self, key: SetKey) -> None:
        self._dirty_scheduled.discard(key)
        try:
            sts = self.cluster.get("StatefulSet", *key)
        except NotFound:
            return
        view = self._view(sts)
        plan = reconcile(view)
        for observe in self.observers:
            observe(view, plan)
        outcome = execute(plan, self.cluster, sts=sts, actor=STATEFULSET_CONTROLLER,
                          emit=lambda ev: self._record_event(sts, ev))
        self.metrics.record(plan.metrics)
        delay: float | None = plan.requeue_after
        if outcome.error is not None:
            backoff = self._backoff.get(key, _BACKOFF_START / 2) * 2
            self._backoff[key] = min(backoff, _BACKOFF_MAX)
            delay = backoff if delay is None else min(delay, backoff)
        else:
            self._backoff.pop(key, None)
        if delay is not None:
            self._requeue(key, self.clock.now + delay)

    def _requeue(self, key: SetKey, at: float) -> None:
        current = self._timers.get(key)
        if current is not None:
            if self.clock.now < current[0] <= at:
                return  # an earlier wake-up is already set; the reconcile then asks again
            self.engine.cancel(current[1])

        def fire() -> None:
            self._timers.pop(key, None)
            self._mark_dirty(key)

        self._timers[key] = (at, self.engine.at(at, CONTROLLER, fire))

    def _view(self, sts: Obj) -> SetView:
        return set_view(self.cluster, sts, now=self.clock.now, gates=self.scenario.gates)

    def _record_event(self, sts: Obj, ev: ControllerEvent) -> None:
        self._event_seq += 1
        self.cluster.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": f"{name_of(sts)}.{self._event_seq}", "namespace": namespace_of(sts)},
                "involvedObject": {"kind": "StatefulSet", "name": name_of(sts), "namespace": namespace_of(sts),
                                   "uid": uid_of(sts)},
                "reason": ev.reason,
                "message": ev.message,
                "type": ev.event_type,
                "source": {"component": STATEFULSET_CONTROLLER},
                "firstTimestamp": self.clock.now,
            },
            actor=STATEFULSET_CONTROLLER,
        )

    # -- the result ------------------------------------------------------------------------------------------

    def _result(self, end: float) -> dict[str, Any]:
        sets = self.cluster.list("StatefulSet")
        pods = self.cluster.list("Pod")
        return {
            "scenario": self.scenario.name,
            "description": self.scenario.description,
            "strategy": None,
            "endedAt": round(end, 6),
            "events": self.recorder.events,
            "summary": self.recorder.summary(end),
            "apiWrites": self.cluster.write_count(STATEFULSET_CONTROLLER),
            "metrics": self.metrics.export(),
            "final": {
                "statefulSets": [{"name": name_of(s), "status": s.get("status") or {}} for s in sets],
                "pods": [_pod_line(pod) for pod in pods],
            },
        }


def _pod_line(pod: Obj) -> Mapping[str, Any]:
    return {"name": name_of(pod), "revision": revision_of(pod), "phase": (pod.get("status") or {}).get("phase"),
            "ready": p.is_ready(pod), "terminating": p.is_terminating(pod)}
