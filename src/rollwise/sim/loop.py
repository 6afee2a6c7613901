"""The simulation loop: the memory store, the simulated kubelet, scenario steps and the controllers in virtual time.

The controller reacts the way an informer-driven controller does: every change to a set or one of its pods
marks the set dirty, and each dirty set is reconciled once per round at that instant (changes coalesce, and the
controller's own writes are seen in the next round, still at the same instant: reaction latency is zero). A
controller that asks to be requeued (minReadySeconds) or fails (backoff) is woken by a timer.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api import predicates as p
from rollwise.api.errors import NotFound
from rollwise.api.identity import revision_of
from rollwise.api.meta import (
    Obj,
    controller_of,
    name_of,
    namespace_of,
    uid_of,
)
from rollwise.api.values import clone
from rollwise.cluster.admission import Admission
from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change
from rollwise.controllers.plan import Plan
from rollwise.controllers.view import SetView
from rollwise.kubelet.agent import PodRuntime, advance, apply_fault
from rollwise.runtime.reconciler import CONTROLLERS, STATEFULSET_CONTROLLER, SetController
from rollwise.runtime.routing import sets_to_wake
from rollwise.runtime.samples import MetricsRegistry
from rollwise.runtime.setkeys import SetKey, all_sets
from rollwise.scenario.scenario import Scenario
from rollwise.sim.engine import CONTROLLER, KUBELET, STEP, Engine
from rollwise.sim.events import FeedEvents
from rollwise.sim.quorum_app import QuorumApp
from rollwise.sim.record import Recorder
from rollwise.sim.steps import StepRunner
from rollwise.sim.tally import Tallies

__all__ = ["STATEFULSET_CONTROLLER", "Simulation"]



class _EngineScheduler:
    """The controller core's clock in the simulator: controller work at the CONTROLLER phase of an instant."""

    __slots__ = ("_engine",)

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def now(self) -> float:
        return self._engine.clock.now

    def at(self, t: float, fn: Callable[[], None]) -> int:
        return self._engine.at(t, CONTROLLER, fn)

    def cancel(self, handle: int) -> None:
        self._engine.cancel(handle)


@dataclass(slots=True)
class _KubeletPod:
    """What the kubelet keeps of one pod (by uid): where it is stored, its runtime, and its pending wake-up. One
    record rather than one entry in each of three tables: a tick reads them all, and at 10,000 replicas each
    table's entry was a read from memory of its own (bench/scale.py)."""

    namespace: str
    name: str
    runtime: PodRuntime | None = None
    wake_at: float | None = None
    wake_handle: int | None = None
    """The engine's handle of the timer for ``wake_at`` (None: no wake-up pending)."""


@dataclass(slots=True)
class _Kubelet:
    pods: dict[str, _KubeletPod] = field(default_factory=dict)

    def at(self, uid: str, namespace: str, name: str) -> _KubeletPod:
        """The pod's record, made or moved to where the pod is stored now."""
        pod = self.pods.get(uid)
        if pod is None:
            pod = self.pods[uid] = _KubeletPod(namespace, name)
        else:
            pod.namespace, pod.name = namespace, name
        return pod


class Simulation:
    """One run of one scenario. ``run()`` returns the result document (spec/simulate.md)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.engine = Engine()
        self.clock = self.engine.clock
        # The simulator reads the change feed, not watches: it keeps no watch history (one only keeps old objects
        # alive, and costs every write a trip through it).
        self.cluster = MemoryCluster(clock=self.clock, admit=Admission(gates=scenario.gates).hooks(),
                                     history_limit=0)
        self.recorder = Recorder(controllers=frozenset(CONTROLLERS), ambiguous=scenario.ambiguous_sets)
        self.kubelet = _Kubelet()
        self.tallies = Tallies(self.cluster)
        """The record's per-set figures as counters fed by the change feed (tally.py)."""
        self._cursor = 0
        self._tick, self._wake = self._kubelet_tick, self._kubelet_wake
        """The kubelet's timers, bound once (a timer holds the method and the pod's uid: engine.py)."""
        self.steps = StepRunner(self)
        self.apps = {name: QuorumApp(self, name, app.params) for name, app in scenario.apps.items()
                     if app.model == "quorum"}
        self.metrics = MetricsRegistry()
        self.events = FeedEvents(cursor=lambda: self.cluster.cursor, clock=self.clock)
        """The controllers' events: to the run record at their place in the feed, not through the store (events.py)."""
        self.controller = SetController(self.cluster, scheduler=_EngineScheduler(self.engine), gates=scenario.gates,
                                        recorder=self.events, metrics=self.metrics, census=True)
        self.observers: list[Callable[[SetView, Plan], None]] = self.controller.observers
        self.quorum_observers: list[Callable[[SetView, Plan], None]] = self.controller.quorum_observers
        """Called with every view and the plan decided from it, before execution (tests check invariants here)."""

    # -- running ---------------------------------------------------------------------------------------------

    def run(self, *, until: float | None = None, progress: Callable[[float], None] | None = None) -> dict[str, Any]:
        """Run to the end and return the result document.

        With ``until`` (``rollwise plan``), stop at that virtual time just before the controllers act at it.

        ``progress`` is called with the virtual time after each instant (for a progress bar)."""
        with _no_cycle_collections():
            return self._run(until=until, progress=progress)

    def _run(self, *, until: float | None, progress: Callable[[float], None] | None) -> dict[str, Any]:
        for obj in self.scenario.objects:
            self.cluster.create(clone(obj), actor="user")
        self.drain()
        self.engine.at(0.0, STEP, self.steps.resume)
        limit = self.scenario.limit_seconds if until is None else min(until, self.scenario.limit_seconds)
        end = 0.0
        while True:
            t = self.engine.next_time()
            if t is None:  # idle: nothing scheduled after the last step
                end = self.clock.now
                break
            if t > limit:
                end = limit
                break
            if until is not None and t >= until:
                self.engine.run_instant(self.drain, below_phase=CONTROLLER)
                end = t
                break
            self.engine.run_instant(self.drain)
            self._end_of_instant()
            if progress is not None:
                progress(t)
        if until is not None:
            self.clock.now = max(self.clock.now, min(until, limit))
        return self._result(end)

    def _end_of_instant(self) -> None:
        self.recorder.sample(self.clock.now, all_sets(self.cluster), self.tallies)
        self.steps.check_wait()

    # -- the change feed -------------------------------------------------------------------------------------

    def drain(self) -> None:
        """Deliver the changes written so far: the run record, the kubelet, the application models and the work
        queue see them; the consumed feed is compacted. The controllers' events go to the record in between, each
        before the first change written after it."""
        if self.cluster.cursor == self._cursor and not self.events:
            return  # most callbacks of an instant write nothing (a kubelet tick with nothing due, a no-op reconcile)
        changes, cursor = self.cluster.changes_since(self._cursor)
        events = self.events.take()
        position, e = self._cursor, 0
        # The followers, looked up once per drain rather than once per change.
        seen, tally, record = self.controller.seen, self.tallies.on_change, self.recorder.on_change
        wake = self._mark_dirty
        for ch in changes:
            while e < len(events) and events[e][0] <= position:  # made before this change was written
                record(events[e][1])
                e += 1
            position += 1
            seen(ch)
            tally(ch)
            record(ch)
            if ch.kind == "Pod":
                self._pod_changed(ch)
            elif ch.kind == "StatefulSet" and ch.type != "DELETED":
                self.metrics.observe_set(ch.old, ch.obj, ch.at)
            for key in sets_to_wake(self.cluster, ch):
                wake(key)
        for _, event in events[e:]:
            record(event)
        self._cursor = cursor
        self.cluster.compact(cursor)

    def _pod_changed(self, ch: Change) -> None:
        uid = uid_of(ch.obj)
        for app in self.apps.values():
            if app.owns(ch.obj):
                app.poke()
        if ch.type == "DELETED":
            gone = self.kubelet.pods.pop(uid, None)
            if gone is not None and gone.wake_handle is not None:
                self.engine.cancel(gone.wake_handle)
        elif ch.actor != "kubelet":
            self.kubelet.at(uid, ch.namespace, ch.name)
            self.engine.at(self.clock.now, KUBELET, self._tick, uid)

    # -- the kubelet -----------------------------------------------------------------------------------------

    def _kubelet_tick(self, uid: str) -> None:
        kept = self.kubelet.pods.get(uid)
        if kept is None:
            return
        namespace, name = kept.namespace, kept.name
        try:
            pod = self.cluster.get("Pod", namespace, name)
        except NotFound:
            return
        if uid_of(pod) != uid:
            return
        app = next((a for a in self.apps.values() if a.owns(pod)), None) if self.apps else None
        readiness = app.readiness_for(pod) if app is not None else None
        step = advance(pod, kept.runtime or PodRuntime.initial(), self.scenario.kubelet, self.clock.now,
                       readiness=readiness)
        kept.runtime = step.runtime
        if step.status is not None:
            self.cluster.update_status({**pod, "status": step.status}, actor="kubelet", handed_over=True)
        if step.remove:
            self.cluster.delete("Pod", namespace, name, grace_period_seconds=0, actor="kubelet")
            return
        if kept.wake_handle is not None and kept.wake_at != step.wake_at:
            # The wake-up goes with its timer: a cancelled timer left on record would be taken for the next
            # wake-up at the same time, which then never fires (a pod left terminating for ever).
            self.engine.cancel(kept.wake_handle)
            kept.wake_at = kept.wake_handle = None
        if step.wake_at is not None and kept.wake_handle is None:
            kept.wake_handle = self.engine.at(step.wake_at, KUBELET, self._wake, uid)
            kept.wake_at = step.wake_at

    def _kubelet_wake(self, uid: str) -> None:
        kept = self.kubelet.pods.get(uid)
        if kept is not None:
            kept.wake_at = kept.wake_handle = None
        self._kubelet_tick(uid)

    def kubelet_poke(self, uid: str) -> None:
        """Ask the kubelet to look at a pod again now (an application model changed its readiness)."""
        if uid in self.kubelet.pods:
            self.engine.at(self.clock.now, KUBELET, self._tick, uid)

    def pod_fault(self, pod_name: str, fault: str, namespace: str = "default") -> bool:
        """Apply a scenario fault to the pod object of that name now; False if there is no such pod."""
        try:
            pod = self.cluster.get("Pod", namespace, pod_name)
        except NotFound:
            return False
        uid = uid_of(pod)
        kept = self.kubelet.at(uid, namespace, pod_name)
        kept.runtime = apply_fault(pod, kept.runtime or PodRuntime.initial(), fault, self.clock.now)
        self._kubelet_tick(uid)
        return True

    # -- the controller --------------------------------------------------------------------------------------

    def _mark_dirty(self, key: SetKey) -> None:
        self.controller.queue.add(key)

    def _view(self, sts: Obj) -> SetView:
        return self.controller.view(sts)

    # -- the result ------------------------------------------------------------------------------------------

    def _pod_name(self, pod: Obj) -> str:
        """As the events name it: ``namespace/pod`` when its set's name is ambiguous (``Recorder.label``)."""
        owner = (controller_of(pod) or {}).get("name", "")
        return f"{namespace_of(pod)}/{name_of(pod)}" if owner in self.recorder.ambiguous else name_of(pod)

    def _summary(self, end: float) -> dict[str, Any]:
        summary = self.recorder.summary(end)
        for name, app in self.apps.items():
            if name in summary:
                start = self.recorder.figures[name].start or 0.0
                lost, elections = app.figures(end, start)
                summary[name]["quorumLossSeconds"] = round(lost, 3)
                summary[name]["leaderElections"] = elections
                # Beyond the contract: every move of leadership, hand-overs on graceful deletion included.
                summary[name]["leaderChanges"] = sum(
                    1 for e in self.recorder.events
                    if e["type"] == "LeaderChanged" and e.get("statefulSet") == name and e.get("pod")
                    and e["t"] >= start)
        return summary

    def _result(self, end: float) -> dict[str, Any]:
        sets = all_sets(self.cluster)
        pods = self.cluster.list("Pod")
        return {
            "scenario": self.scenario.name,
            "description": self.scenario.description,
            "strategy": None,
            "endedAt": round(end, 6),
            "events": self.recorder.events,
            "summary": self._summary(end),
            "samples": self.recorder.samples(),
            "apiWrites": sum(self.cluster.write_count(c) for c in CONTROLLERS),
            "metrics": self.metrics.export(),
            "final": {
                "statefulSets": [{"name": self.recorder.label(namespace_of(s), name_of(s)),
                                  "spec": {"replicas": s["spec"].get("replicas"),
                                           "ordinals": s["spec"].get("ordinals") or {"start": 0},
                                           "updateStrategy": s["spec"].get("updateStrategy")},
                                  "status": s.get("status") or {}} for s in sets],
                "pods": [{**_pod_line(pod), "name": self._pod_name(pod)} for pod in pods],
            },
        }


@contextlib.contextmanager
def _no_cycle_collections() -> Iterator[None]:
    """A run allocates millions of short-lived objects and makes no reference cycles (API objects are JSON trees,
    freed by reference counting; tests/sim/test_run_garbage.py holds a run to that). The cycle collector would
    only scan the survivors, the store growing under it: at its default thresholds a fifth of a 10,000-replica
    run, and still a thirtieth with the young generation collected every 50,000 allocations (ten scans of 50,000
    scattered objects; a 1,000-replica run has none, so the scans were most of the growth from one to the other,
    bench/scale.py). So the collector is off for the run.

    At the end the survivors go straight to the oldest generation (``gc.freeze`` then ``gc.unfreeze``) rather than
    being scanned by the young collection that re-enabling would soon set off: they live as long as the run's
    result, and a later full collection still finds any cycle among them. Skipped when the process keeps frozen
    objects of its own, which an unfreeze would release."""
    enabled = gc.isenabled()
    owned_freeze = gc.get_freeze_count() == 0
    gc.disable()
    try:
        yield
    finally:
        if owned_freeze:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


def _pod_line(pod: Obj) -> Mapping[str, Any]:
    return {"name": name_of(pod), "revision": revision_of(pod), "phase": (pod.get("status") or {}).get("phase"),
            "ready": p.is_ready(pod), "terminating": p.is_terminating(pod)}
