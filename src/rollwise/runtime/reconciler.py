"""The StatefulSet controllers' reconcile of one set, shared by every driver.

One key is one set: its view is rebuilt from the cluster every time (level-triggered, nothing remembered between
calls), rollwise's StatefulSet controller decides and its plan is executed; then, for a set handed to it, the
quorum-aware controller (DEP-07) decides on what the first one left — the chain of ``runtime/registrations.py``,
the same for both kinds. The work queue requeues the key when a plan asks (``requeue_after``) and backs off when a
write failed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from rollwise.api.errors import NotFound
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import GroupKind
from rollwise.controllers.plan import Plan
from rollwise.controllers.view import SetView
from rollwise.runtime.actors import QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.runtime.census import CensusIndex
from rollwise.runtime.clock import Clock
from rollwise.runtime.execute import ControllerEvent, execute
from rollwise.runtime.hand_overs import HandOvers
from rollwise.runtime.inline import InlineWorker
from rollwise.runtime.limiter import ItemExponentialRateLimiter
from rollwise.runtime.queue import WorkQueue
from rollwise.runtime.recorder import ControllerEvents
from rollwise.runtime.registrations import QUORUM, Registration, chain_for
from rollwise.runtime.role_probes import RoleProbes
from rollwise.runtime.samples import MetricsRegistry
from rollwise.runtime.setkeys import SetKey, set_resource
from rollwise.runtime.views import set_view

__all__ = ["SetController"]

_ROUNDS_PER_ORDINAL = 8

Observer = Callable[[SetView, Plan], None]


class SetController:
    """Reconciles StatefulSets (``SetKey``s) through the work queue, on ``clock``'s timers (``InlineWorker``).

    Drivers call ``queue.add(key)`` when a set or something it reads changed. ``observers`` and
    ``quorum_observers`` are called with every view and the plan decided from it, before execution.
    ``backoff_max``: the cap of a failing key's back-off; ``settle_guard``: raise when a set does not settle in
    one instant (virtual time, where instants repeat); ``after_each``: called after every reconcile (``up``
    delivers the reconcile's writes to its watchers then)."""

    def __init__(self, cluster: Cluster, *, clock: Clock, gates: FeatureGates,
                 recorder: ControllerEvents, metrics: MetricsRegistry | None = None, quorum: bool = True,
                 census: bool = False, backoff_max: float = 1000.0, settle_guard: bool = True,
                 after_each: Callable[[], None] | None = None) -> None:
        self.cluster = cluster
        self.quorum = quorum
        """False: the quorum-aware controller is left to an external operator (``up --controllers=-quorum``)."""
        self.gates = gates
        self.recorder = recorder
        self.metrics = metrics if metrics is not None else MetricsRegistry()
        self._clock = clock
        self._after_each = after_each
        # Per-key back-off only: a token bucket would make a simulated rollout's timing depend on how many other
        # keys failed, which a reader of one set's timeline cannot see.
        self.queue: WorkQueue[SetKey] = WorkQueue(clock, limiter=ItemExponentialRateLimiter(0.005, backoff_max))
        self.worker = InlineWorker(self.queue, self._process, rounds_for=self._rounds_for,
                                   max_rounds_per_instant=200 if settle_guard else None)
        self.census = CensusIndex(cluster) if census else None
        """With ``census``, views come from an index the driver feeds every change (``seen``): a reconcile then
        costs what changed, not the set's size (census.py). The driver must drain the feed before each reconcile."""
        self.observers: list[Observer] = []
        self.quorum_observers: list[Observer] = []
        self._observers = {STATEFULSET_CONTROLLER: self.observers, QUORUM_CONTROLLER: self.quorum_observers}
        self.role_probes: RoleProbes | None = None
        """Asks the members of role-probed sets who leads, for the quorum-aware controller's view (role_probes.py);
        None: no member is asked (the simulator, whose members are models: a probed set's roles stay unknown)."""
        self.hand_overs: HandOvers | None = None
        """Answers a Patroni set's hand-over requests with a switchover, on threads of its own (hand_overs.py)."""
        self.stands_down: Callable[[Registration, SetKey], bool] | None = None
        """Whether a controller leaves a set to someone else now (``up``: the operator leads, local/standdown.py)."""

    def _rounds_for(self, key: SetKey) -> int:
        """How many more reconciles one instant may take before the set counts as stuck in a loop. With zero kubelet
        timings a whole OrderedReady rollout happens at one instant, a few reconciles per ordinal (create, ready,
        delete, gone; measured about 3), so the bound grows with the set's size rather than being one constant."""
        try:
            replicas = (self.cluster.get(*key).get("spec") or {}).get("replicas")
        except NotFound:
            return 0
        return _ROUNDS_PER_ORDINAL * (replicas if isinstance(replicas, int) and replicas > 0 else 1)

    def seen(self, change: Change) -> None:
        """A change the driver read from the feed (feeds the census index, when there is one)."""
        if self.census is not None:
            self.census.on_change(change)

    def view(self, sts: Obj) -> SetView:
        return set_view(self.cluster, sts, now=self._clock.now(), gates=self.gates)

    def preview(self, sts: Obj) -> list[tuple[str, Plan]]:
        """What each controller would do to ``sts`` now, by controller name, nothing executed (``rollwise plan``):
        the StatefulSet controller's plan, and the quorum-aware controller's where it has something to do."""
        view = self.view(sts)
        plans = []
        for i, row in enumerate(chain_for(set_resource(sts))):
            plan = row.decide(view)
            if i == 0 or plan.actions or plan.blocked:
                plans.append((row.actor, plan))
        return plans

    def _process(self, key: SetKey) -> tuple[float | None, bool]:
        try:
            return self.reconcile(key)
        finally:
            if self._after_each is not None:
                self._after_each()

    def reconcile(self, key: SetKey) -> tuple[float | None, bool]:
        """Reconcile one set: each controller of its kind (``registrations.chain_for``) decides in turn on what the
        ones before it wrote, and its plan is executed. Returns when to look again (seconds, or None; the first
        controller's, the later ones' go straight to the queue) and whether a write failed."""
        try:
            sts = self.cluster.get(*key)
        except NotFound:
            return None, False
        requeue: float | None = None
        for i, row in enumerate(self._chain(key[0])):
            if i > 0:
                try:
                    sts = self.cluster.get(*key)
                except NotFound:
                    break
            if not row.runs_for(sts) or (self.stands_down is not None and self.stands_down(row, key)):
                continue
            now = self._clock.now()
            view = self.census.view(sts, now=now, gates=self.gates) if i == 0 and self.census is not None \
                else self.view(sts)
            if row is QUORUM and self.role_probes is not None:
                view = dataclasses.replace(view, probes=self.role_probes.answers(view))
            if row is QUORUM and self.hand_overs is not None:
                self.hand_overs.answer(view)
            plan = row.decide(view)
            for observe in self._observers[row.actor]:
                observe(view, plan)
            self.metrics.record(plan.metrics)
            if i == 0:
                requeue = plan.requeue_after
            elif plan.requeue_after is not None:
                self.queue.add_at(key, now + plan.requeue_after)
            if plan.actions:
                outcome = execute(plan, self.cluster, sts=sts, actor=row.actor, emit=self._emitter(sts, row.actor))
                if outcome.error is not None:
                    return requeue, True  # the next controller waits for a write that landed
        return requeue, False

    def _emitter(self, sts: Obj, actor: str) -> Callable[[ControllerEvent], None]:
        return lambda ev: self.recorder.record(sts, ev, actor)

    def _chain(self, kind: GroupKind) -> tuple[Registration, ...]:
        return chain_for(kind, runs=lambda r: self.quorum or r is not QUORUM)
