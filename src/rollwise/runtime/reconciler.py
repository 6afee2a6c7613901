"""The StatefulSet controllers' reconcile of one set, shared by every driver.

One key is one set: its view is rebuilt from the cluster every time (level-triggered, nothing remembered between
calls), rollwise's StatefulSet controller decides and its plan is executed; then, for a set handed to it, the
quorum-aware controller (DEP-07) decides on what the first one left. The work queue requeues the key when a plan
asks (``requeue_after``) and backs off when a write failed.
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api.errors import NotFound
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, annotations_of
from rollwise.cluster.protocol import Change, Cluster
from rollwise.controllers.plan import Plan
from rollwise.controllers.quorum import reconcile_quorum
from rollwise.controllers.quorum.settings import UPDATE_POLICY
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.runtime.census import CensusIndex
from rollwise.runtime.events import ControllerEvents
from rollwise.runtime.execute import Outcome, execute
from rollwise.runtime.instant_queue import Scheduler, WorkQueue
from rollwise.runtime.samples import MetricsRegistry
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.views import set_view

__all__ = ["CONTROLLERS", "QUORUM_CONTROLLER", "STATEFULSET_CONTROLLER", "SetController"]

STATEFULSET_CONTROLLER = "statefulset-controller"
QUORUM_CONTROLLER = "quorum-aware-controller"
CONTROLLERS = (STATEFULSET_CONTROLLER, QUORUM_CONTROLLER)
_ROUNDS_PER_ORDINAL = 8

Observer = Callable[[SetView, Plan], None]


class SetController:
    """Reconciles StatefulSets (``SetKey``s) through a work queue on ``scheduler``.

    Drivers call ``queue.add(key)`` when a set or something it reads changed. ``observers`` and
    ``quorum_observers`` are called with every view and the plan decided from it, before execution."""

    def __init__(self, cluster: Cluster, *, scheduler: Scheduler, gates: FeatureGates,
                 recorder: ControllerEvents, metrics: MetricsRegistry | None = None, quorum: bool = True,
                 census: bool = False) -> None:
        self.cluster = cluster
        self.quorum = quorum
        """False: the quorum-aware controller is left to an external operator (``up --controllers=-quorum``)."""
        self.gates = gates
        self.recorder = recorder
        self.metrics = metrics if metrics is not None else MetricsRegistry()
        self._scheduler = scheduler
        self.queue: WorkQueue[SetKey] = WorkQueue(scheduler, self.reconcile, rounds_for=self._rounds_for)
        self.census = CensusIndex(cluster) if census else None
        """With ``census``, views come from an index the driver feeds every change (``seen``): a reconcile then
        costs what changed, not the set's size (census.py). The driver must drain the feed before each reconcile."""
        self.observers: list[Observer] = []
        self.quorum_observers: list[Observer] = []

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
        return set_view(self.cluster, sts, now=self._scheduler.now(), gates=self.gates)

    def reconcile(self, key: SetKey) -> None:
        try:
            sts = self.cluster.get(*key)
        except NotFound:
            return
        now = self._scheduler.now()
        view = self.census.view(sts, now=now, gates=self.gates) if self.census is not None else self.view(sts)
        plan = reconcile(view)
        for observe in self.observers:
            observe(view, plan)
        outcome = execute(plan, self.cluster, sts=sts, actor=STATEFULSET_CONTROLLER,
                          emit=lambda ev: self.recorder.record(sts, ev, STATEFULSET_CONTROLLER))
        # Only a set handed to the quorum-aware controller (its annotation, which no plan of the first one writes).
        if outcome.error is None and self.quorum and annotations_of(sts).get(UPDATE_POLICY):
            outcome = self._reconcile_quorum(key) or outcome
        self.metrics.record(plan.metrics)
        self.queue.done(key, requeue_after=plan.requeue_after, failed=outcome.error is not None)

    def _reconcile_quorum(self, key: SetKey) -> Outcome | None:
        """The quorum-aware controller (DEP-07) sees the set after the StatefulSet controller's writes."""
        if not self.quorum:
            return None
        try:
            sts = self.cluster.get(*key)
        except NotFound:
            return None
        if not annotations_of(sts).get(UPDATE_POLICY):
            return None  # not handed to the quorum-aware controller: spare building its view
        view = self.view(sts)
        plan = reconcile_quorum(view)
        for observe in self.quorum_observers:
            observe(view, plan)
        if not plan.actions and plan.requeue_after is None:
            return None
        outcome = execute(plan, self.cluster, sts=sts, actor=QUORUM_CONTROLLER,
                          emit=lambda ev: self.recorder.record(sts, ev, QUORUM_CONTROLLER))
        if plan.requeue_after is not None:
            self.queue.requeue_at(key, self._scheduler.now() + plan.requeue_after)
        return outcome
