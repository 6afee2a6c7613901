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
from typing import Any

from rollwise.api import predicates as p
from rollwise.api.claim_templates import claim_conditions, reported_capacity, requested_storage
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
from rollwise.cluster.store.admission import Admission
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.plan import Plan
from rollwise.controllers.view import SetView
from rollwise.kubelet.hook_agent import HookAgent, release_hook
from rollwise.kubelet.loop import Kubelet
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.kubelet.quorum import QuorumEvent
from rollwise.kubelet.quorum_binding import QuorumModels
from rollwise.kubelet.volumes import VolumeExpander
from rollwise.runtime.actors import CONTROLLERS, QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.reconciler import SetController
from rollwise.runtime.recorder import EventRecorder
from rollwise.runtime.routing import ClusterSets
from rollwise.runtime.samples import MetricsRegistry
from rollwise.runtime.setkeys import all_sets
from rollwise.scenario.scenario import Scenario
from rollwise.sim.analyses import AnalysisPlayer
from rollwise.sim.engine import CONTROLLER, KUBELET, STEP, Engine, EngineClock
from rollwise.sim.events import FeedEvents
from rollwise.sim.quiet import QuietWrites
from rollwise.sim.record import Recorder
from rollwise.sim.steps import StepRunner
from rollwise.sim.tally import Tallies

__all__ = ["STATEFULSET_CONTROLLER", "Simulation"]



class Simulation:
    """One run of one scenario. ``run()`` returns the result document (spec/simulate.md)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.engine = Engine()
        self.clock = self.engine.clock
        # The simulator reads the change feed, not watches: it keeps no watch history (one only keeps old objects
        # alive, and costs every write a trip through it).
        admission = Admission(gates=scenario.gates)
        self.cluster = MemoryCluster(clock=self.clock, admit=admission.hooks(), history_limit=0)
        admission.bind(self.cluster)  # a claim's expansion reads its StorageClass
        self.recorder = Recorder(controllers=frozenset(CONTROLLERS), ambiguous=scenario.ambiguous_sets)
        self._sets = ClusterSets(self.cluster)
        self.tallies = Tallies(self.cluster)
        """The record's per-set figures as counters fed by the change feed (tally.py)."""
        self._cursor = 0
        self.steps = StepRunner(self)
        # The kubelet and the application models run at the kubelet's phase of an instant (engine.py).
        kubelet_clock = EngineClock(self.engine, KUBELET)
        quorum = {name: app.params for name, app in scenario.apps.items() if app.model == "quorum"}
        self.models = QuorumModels(self.cluster, quorum, clock=kubelet_clock, poke_pod=self._kubelet_poke,
                                   emit=self._model_event) if quorum else None
        """The application models bound to sets (kubelet/quorum_binding.py)."""
        self.kubelet = Kubelet(self.cluster, kubelet_clock, scenario.kubelet, handed_over=True,
                               readiness=self.models.readiness_for if self.models is not None else None)
        """The simulated kubelet (kubelet/loop.py); a refused write of its is a bug, so it is not retried."""
        profile = scenario.kubelet
        self.hooks = HookAgent(self.cluster, kubelet_clock, lambda pod: profile.hook_release_delay(
            [str(c.get("image")) for c in pod["spec"].get("containers") or ()])) if _releases_hooks(profile) else None
        """The applications' drain agents for pre-delete hooks, when the scenario models one (hook_agent.py)."""
        self.volumes = VolumeExpander(self.cluster, kubelet_clock)
        """Claims whose request grew expand, capacity following after a delay (kubelet/volumes.py)."""
        self.metrics = MetricsRegistry()
        self.events = FeedEvents(cursor=lambda: self.cluster.cursor, clock=self.clock)
        """The controllers' events: to the run record at their place in the feed, not through the store (events.py)."""
        quiet = QuietWrites(self.recorder, lambda: self.cluster.cursor)  # the summary's writesWithoutChange
        self.controller = SetController.inline(
            self.cluster, clock=EngineClock(self.engine, CONTROLLER), gates=scenario.gates,
            recorder=EventRecorder(self.events, now=self.clock, wall_time=self.clock, correlate=False),
            metrics=self.metrics, census=True, after_each=quiet.ended)
        self.analyses = AnalysisPlayer(self.cluster, EngineClock(self.engine, CONTROLLER), scenario.analyses,
                                       self.recorder.emit)
        """The AnalysisRun controller, measuring from the scenario's recorded values (sim/analyses.py)."""
        self.changes = ChangeDispatcher()
        """Wakes the set controller and the AnalysisRun controller for each change the feed delivers
        (runtime/dispatch.py)."""
        assert self.controller.host is not None
        self.changes.add_sets(self._sets, self.controller.host.wake)
        self.analyses.register(self.changes)
        self.observers: list[Callable[[SetView, Plan], None]] = self.controller.observers
        self.quorum_observers: list[Callable[[SetView, Plan], None]] = self.controller.quorum_observers
        """Called with every view and the plan decided from it, before execution (tests check invariants here)."""
        self.observers.append(quiet.observer(STATEFULSET_CONTROLLER))
        self.quorum_observers.append(quiet.observer(QUORUM_CONTROLLER))

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
        dispatch = self.changes.dispatch
        kubelet, models, hooks = self.kubelet.pod_changed, self.models, self.hooks
        for ch in changes:
            while e < len(events) and events[e][0] <= position:  # made before this change was written
                record(events[e][1])
                e += 1
            position += 1
            seen(ch)
            tally(ch)
            record(ch)
            if ch.kind == "Pod":
                if models is not None:  # before the kubelet: a model's run comes first at the instant
                    models.pod_changed(ch.obj)
                kubelet(ch)
                if hooks is not None:
                    hooks.pod_changed(ch)
            elif ch.kind == "PersistentVolumeClaim":
                self.volumes.claim_changed(ch)
            elif ch.kind == "StatefulSet" and ch.type != "DELETED":
                self.metrics.observe_set(ch.old, ch.obj, ch.at)
            dispatch(ch)
        for _, event in events[e:]:
            record(event)
        self._cursor = cursor
        self.cluster.compact(cursor)

    # -- the kubelet and the application models ----------------------------------------------------------------

    def _kubelet_poke(self, uid: str) -> None:
        self.kubelet.poke(uid)

    def release_hook(self, pod_name: str, namespace: str = "default") -> bool:
        """A ``releaseHook`` step: the pod's pre-delete hook labels and finalizers removed now (False: no such pod)."""
        try:
            release_hook(self.cluster, namespace, pod_name, actor="user")
        except NotFound:
            return False
        return True

    def pod_fault(self, pod_name: str, fault: str, namespace: str = "default") -> bool:
        """Apply a scenario fault to the pod object of that name now; False if there is no such pod."""
        try:
            pod = self.cluster.get("Pod", namespace, pod_name)
        except NotFound:
            return False
        self.kubelet.fault(pod, fault)
        return True

    def _model_event(self, namespace: str, set_name: str, sts: Obj | None, event: QuorumEvent) -> None:
        self.recorder.emit(event.t, event.type, pod=event.pod, statefulSet=set_name)

    # -- the result ------------------------------------------------------------------------------------------

    def _pod_name(self, pod: Obj) -> str:
        """As the events name it: ``namespace/pod`` when its set's name is ambiguous (``Recorder.label``)."""
        owner = (controller_of(pod) or {}).get("name", "")
        return f"{namespace_of(pod)}/{name_of(pod)}" if owner in self.recorder.ambiguous else name_of(pod)

    def _claim_name(self, claim: Obj) -> str:
        """``namespace/claim`` when some set's name is ambiguous in this run (a claim's owner may be its pod, so the
        set is not at hand: every claim is then named with its namespace)."""
        return f"{namespace_of(claim)}/{name_of(claim)}" if self.recorder.ambiguous else name_of(claim)

    def _summary(self, end: float) -> dict[str, Any]:
        summary = self.recorder.summary(end)
        models = self.models
        if models is None:
            return summary
        for name in models.params:
            if name in summary:
                start = self.recorder.figures[name].start or 0.0
                lost, elections = models.figures(name, end, start)
                summary[name]["quorumLossSeconds"] = round(lost, 3)
                summary[name]["leaderElections"] = elections
                summary[name]["leaderlessSeconds"] = round(models.leaderless(name, end, start), 3)
                # Beyond the contract: every move of leadership, hand-overs on graceful deletion included.
                summary[name]["leaderChanges"] = sum(
                    1 for e in self.recorder.events
                    if e["type"] == "LeaderChanged" and e.get("statefulSet") == name and e.get("pod")
                    and e["t"] >= start)
        return summary

    def _result(self, end: float) -> dict[str, Any]:
        sets = all_sets(self.cluster)
        pods = self.cluster.list("Pod")
        claims = self.cluster.list("PersistentVolumeClaim")
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
                                           **({"reserveOrdinals": s["spec"]["reserveOrdinals"]}
                                              if "reserveOrdinals" in s["spec"] else {}),
                                           "updateStrategy": s["spec"].get("updateStrategy")},
                                  "status": s.get("status") or {}} for s in sets],
                "pods": [{**_pod_line(pod), "name": self._pod_name(pod)} for pod in pods],
                "claims": [{**_claim_line(claim), "name": self._claim_name(claim)} for claim in claims],
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
    """A pod as the run left it; ``uid`` and ``restartCount`` (summed over its containers) show which pods were
    updated in place rather than recreated."""
    status = pod.get("status") or {}
    restarts = sum(cs.get("restartCount") or 0 for cs in status.get("containerStatuses") or ()
                   if isinstance(cs, dict) and isinstance(cs.get("restartCount"), int))
    return {"name": name_of(pod), "revision": revision_of(pod), "phase": status.get("phase"),
            "ready": p.is_ready(pod), "terminating": p.is_terminating(pod), "uid": uid_of(pod),
            "restartCount": restarts}


def _claim_line(claim: Obj) -> Mapping[str, Any]:
    """A claim as the run left it: what it asks for, what it has, and its conditions (``Resizing``,
    ``FileSystemResizePending``), so a run shows which claims an InPlace claim-template update expanded."""
    # A scenario's claim template may hold any shape: these readers skip what is not a mapping.
    return {"name": name_of(claim), "storage": requested_storage(claim), "capacity": reported_capacity(claim),
            "conditions": claim_conditions(claim), "terminating": p.is_terminating(claim)}


def _releases_hooks(profile: KubeletProfile) -> bool:
    return profile.hook_release_seconds is not None or any(
        b.hook_release_seconds is not None for b in profile.images.values())
