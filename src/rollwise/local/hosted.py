"""``up``'s controllers of objects other than sets: the rows of ``registrations.OBJECT_CONTROLLERS`` that
``up --controllers`` turns on, each hosted by the runtime's one controller host (``runtime/host.py``) on the
driver's clock. This module only says how ``up`` reconciles one key of each row over its in-process store: read
the view, call the row's decision, write the plan, and deliver the writes to the watchers (``pump``).

* Deployment, ReplicaSet, ReplicationController (``controllers/deployment``, ``controllers/replicaset``): as
  kube-controller-manager's controllers of those names write; a refused write backs off, ``requeue_after`` becomes
  a delayed add.
* PodDisruptionBudget (``controllers/disruption.budget_status``): the status written when it changed; the eviction
  subresource does not wait for it (it computes the allowance afresh, apiserver/serving/eviction.py).
* AnalysisRun (``runtime.analysis.reconcile_run``): on asyncio workers, since a reconcile awaits its measurements
  off the loop; while an operator that runs ``analysis`` leads (``local/standdown.py``), the runs of its
  namespaces are left to it, and the driver wakes every run when it stops leading.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from functools import partial
from typing import cast

from rollwise.api.errors import AlreadyExists, ApiStatusError, NotFound
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.cluster.protocol import Cluster
from rollwise.cluster.resources import ANALYSIS_RUN, ANALYSIS_TEMPLATE, POD, GroupKind
from rollwise.controllers import deployment, replicaset
from rollwise.controllers.disruption import budget_status
from rollwise.controllers.workload import Create, Delete, Update, UpdateStatus, WorkloadPlan
from rollwise.runtime.analysis import reconcile_run
from rollwise.runtime.clock import Clock
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.host import ControllerHost
from rollwise.runtime.limiter import ItemExponentialRateLimiter
from rollwise.runtime.recorder import EventRecorder
from rollwise.runtime.registrations import ANALYSIS, DEPLOYMENT_ROW, DISRUPTION, KindController
from rollwise.runtime.setkeys import all_sets
from rollwise.runtime.wakes import REPLICASET, ObjectKey

__all__ = ["LocalControllers"]

log = logging.getLogger("rollwise.wall")

_BACKOFF_BASE, _BACKOFF_MAX = 0.005, 300.0
_ANALYSIS_WORKERS = 4
"""Runs measured at once (each awaits its providers off the loop, as several runs of one cluster do)."""


class LocalControllers:
    """Hosts ``rows`` over ``cluster`` on ``clock``. ``writes``: where the AnalysisRun controller writes (``up``
    audits it); ``stands_down(row, key)``: the object is left to a leading operator now."""

    def __init__(self, cluster: Cluster, *, rows: tuple[KindController, ...], clock: Clock, pump: Callable[[], None],
                 writes: Cluster | None = None, recorder: EventRecorder | None = None,
                 stands_down: Callable[[KindController, ObjectKey], bool] = lambda _row, _key: False) -> None:
        self.cluster = cluster
        self.clock = clock
        self.pump = pump
        self.recorder = recorder
        self.stands_down = stands_down
        self._run_writes = _StoreWrites(writes if writes is not None else cluster, pump)
        self.hosted: list[tuple[KindController, ControllerHost[ObjectKey]]] = []
        for row in rows:
            limiter = ItemExponentialRateLimiter(_BACKOFF_BASE, _BACKOFF_MAX)
            if row is ANALYSIS:
                host: ControllerHost[ObjectKey] = ControllerHost(
                    row.actor, clock=clock, awaited=self._reconcile_run, limiter=limiter, workers=_ANALYSIS_WORKERS)
            else:
                inline = partial(self._reconcile_budget if row is DISRUPTION else self._reconcile_workload, row)
                host = ControllerHost(row.actor, clock=clock, inline=inline, limiter=limiter, after_each=pump)
            self.hosted.append((row, host))

    def start(self, changes: ChangeDispatcher) -> None:
        """Start the hosts, wake every object, and have ``changes`` wake each hosted row by its rule from now on."""
        for _, host in self.hosted:
            host.start()
        self.wake_all(every=True)
        for row, host in self.hosted:
            changes.add_objects(row, self.cluster, host.wake_all)

    def stop(self) -> None:
        for _, host in self.hosted:
            host.stop()

    def wake_all(self, *, every: bool = False) -> None:
        """Every object of the rows an operator may run (they resume where it left off), or of ``every`` row."""
        for row, host in self.hosted:
            if not every and not row.operator_names:
                continue
            for kind in row.kinds:
                host.wake_all((kind, namespace_of(obj), name_of(obj)) for obj in self.cluster.list(kind))

    # -- one reconcile per row ------------------------------------------------------------------------------

    def _reconcile_workload(self, row: KindController, key: ObjectKey) -> tuple[float | None, bool]:
        gk, namespace, name = key
        try:
            obj = self.cluster.get(gk, namespace, name)
        except NotFound:
            return None, False
        now = self.clock.now()
        pods = self.cluster.list(POD, namespace)
        if row is DEPLOYMENT_ROW:
            plan = deployment.reconcile(deployment.DeploymentView(obj, self.cluster.list(REPLICASET, namespace),
                                                                  pods, now))
        else:
            plan = replicaset.reconcile(replicaset.ReplicaSetView(obj, pods, now))
        return plan.requeue_after, self._execute(plan, row.actor)

    def _execute(self, plan: WorkloadPlan, actor: str) -> bool:
        """Run the plan's writes in order; True when one failed (the rest are left for the next look)."""
        for action in plan.actions:
            try:
                if isinstance(action, Create):
                    self.cluster.create(action.obj, actor=actor)
                elif isinstance(action, Update):
                    self.cluster.update(action.obj, actor=actor)
                elif isinstance(action, UpdateStatus):
                    self.cluster.update_status(action.obj, actor=actor)
                elif isinstance(action, Delete):
                    self.cluster.delete(GroupKind(action.group, action.kind), action.namespace, action.name,
                                        actor=actor)
            except (AlreadyExists, NotFound):
                continue  # someone else got there first: the next look sees it
            except ApiStatusError as err:
                log.debug("%s: %s failed: %s", actor, type(action).__name__, err)
                return True
        return False

    def _reconcile_budget(self, row: KindController, key: ObjectKey) -> tuple[float | None, bool]:
        gk, namespace, name = key
        try:
            pdb = self.cluster.get(gk, namespace, name)
        except NotFound:
            return None, False
        pods = self.cluster.list(POD, namespace)
        scales = {uid_of(s): int(s["spec"].get("replicas", 1)) for s in all_sets(self.cluster, namespace)}
        status = budget_status(pdb, pods, scales, self.clock.now())
        if status == (pdb.get("status") or {}):
            return None, False
        try:
            self.cluster.update_status({**pdb, "status": status}, actor=row.actor)
        except NotFound:
            return None, False
        except ApiStatusError as err:  # changed meanwhile: look again, after a back-off
            log.debug("%s: status of %s not written: %s", row.actor, name, err)
            return None, True
        return None, False

    async def _reconcile_run(self, key: Hashable) -> float | None:
        _, namespace, name = cast(ObjectKey, key)
        try:
            run = self.cluster.get(ANALYSIS_RUN, namespace, name)
        except NotFound:
            return None
        if self.stands_down(ANALYSIS, cast(ObjectKey, key)):
            return None
        templates = {name_of(t): t for t in self.cluster.list(ANALYSIS_TEMPLATE, namespace)}
        # A refused write (a stale read: Conflict) raises, and the host backs the run off.
        outcome = await reconcile_run(run, templates, writes=self._run_writes, now=self.clock.now)
        if self.recorder is not None:
            for event in outcome.events:
                self.recorder.record(run, event, ANALYSIS.actor)
        return outcome.requeue


class _StoreWrites:
    """A run's writes through the store, each delivered to the watchers at once."""

    __slots__ = ("cluster", "pump")

    def __init__(self, cluster: Cluster, pump: Callable[[], None]) -> None:
        self.cluster = cluster
        self.pump = pump

    async def update(self, obj: Obj) -> Obj:
        out = self.cluster.update(obj, actor=ANALYSIS.actor)
        self.pump()
        return out

    async def update_status(self, obj: Obj) -> Obj:
        out = self.cluster.update_status(obj, actor=ANALYSIS.actor)
        self.pump()
        return out
