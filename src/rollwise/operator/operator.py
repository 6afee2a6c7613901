"""The operator process: informers, the set controllers, leader election, events, metrics and probes, in the order
controller-runtime's manager starts them (``pkg/manager/internal.go``: caches, then leader election, then the
controllers), and stopped in the reverse order on SIGTERM (operator-plan §1.3 item 11).

* Every replica lists and watches, so a standby's caches are warm when it is elected.
* Workers start only once every informer has synced and, with ``leader_elect``, once this process leads.
* Losing the lease stops the process (``run`` returns "lost leadership"): the writes are fenced already, and a
  fresh start is the simplest way back to a consistent state, as controller-runtime does.
* Shutdown: stop taking keys, let reconciles in flight finish (bounded), flush events (bounded), stop the
  informers, release the lease.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, cast

from rollwise.api.features import FeatureGates
from rollwise.cluster.client.listwatch import ListWatchSource
from rollwise.cluster.client.namespaces import MultiNamespaceListWatch
from rollwise.cluster.client.scope import Selector, informer_selectors
from rollwise.cluster.operator_namespace import DEFAULT_NAMESPACE
from rollwise.cluster.protocol import Cluster
from rollwise.cluster.resources import ANALYSIS_RUN, GroupKind
from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset.analysis import SET_LABEL
from rollwise.controllers.view import SetView
from rollwise.operator.analysis import AnalysisRunController
from rollwise.operator.election import LeaderElector, LeaseClient, LeaseTimings
from rollwise.operator.feeds import CachedSets, SetFeed, informer_feed
from rollwise.operator.sets import CacheConsistency, OperatorWrites
from rollwise.operator.world import AsyncCluster, LoopCluster
from rollwise.runtime.actors import QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.runtime.cache import Store
from rollwise.runtime.clock import AsyncClock, WallClock
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.hand_overs import HandOvers
from rollwise.runtime.host import ControllerHost
from rollwise.runtime.informer import Informer
from rollwise.runtime.metrics import RuntimeMetrics
from rollwise.runtime.queue import WorkQueue
from rollwise.runtime.reconciler import SetController
from rollwise.runtime.recorder import AsyncEventRecorder, AsyncEventSink
from rollwise.runtime.registrations import (
    ANALYSIS,
    Registration,
    operator_decision,
    operator_kind_name,
    operator_kinds,
    operator_marks,
    run_controller_names,
)
from rollwise.runtime.role_probes import RoleProbes
from rollwise.runtime.set_reads import CacheReads
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.trace import DecisionLog

__all__ = ["CONTROLLERS", "Operator", "OperatorConfig"]

log = logging.getLogger("rollwise.runtime.operator")

CONTROLLERS = run_controller_names()
"""``--controllers``, as the registration table names them (``runtime/registrations.py``): the StatefulSet
controller of the custom kind, the quorum-aware controller of both kinds, and the AnalysisRun controller
(``operator/analysis.py``)."""
SHARED_KINDS = ("Pod", "PersistentVolumeClaim", "ControllerRevision", "Lease", "PodDisruptionBudget")


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorConfig:
    """How one ``rollwise run`` process runs, from its flags (``cli/run.py``): who it is in the Lease and the audit
    log (``identity``), which namespaces it watches, which controllers it hosts (``CONTROLLERS``), whether and how it
    takes part in leader election, how many workers reconcile at once, the feature gates its decisions read, and
    how long a shutdown waits for reconciles in flight. An unknown controller name is refused at construction."""

    identity: str
    namespaces: tuple[str, ...] = ()
    """Watch only these namespaces (empty: the whole cluster)."""
    controllers: tuple[str, ...] = ("statefulset", "quorum")
    leader_elect: bool = False
    lease_namespace: str = DEFAULT_NAMESPACE
    lease_name: str = "rollwise"
    timings: LeaseTimings = field(default_factory=LeaseTimings)
    workers: int = 5
    gates: FeatureGates = field(default_factory=FeatureGates)
    actor: str = "rollwise"
    shutdown_grace_seconds: float = 10.0

    def __post_init__(self) -> None:
        unknown = [c for c in self.controllers if c not in CONTROLLERS]
        if unknown or not self.controllers:
            raise ValueError(f"--controllers: unknown {', '.join(unknown) or '(none given)'}; "
                             f"known: {', '.join(CONTROLLERS)}")


def _waker(queue: WorkQueue[Hashable]) -> Callable[[SetKey], None]:
    """The operator's work-queue key of a set: ``(namespace, name)``, one queue per kind."""
    return lambda key: queue.add((key[1], key[2]))


def _fixed(chain: tuple[Registration, ...]) -> Callable[[GroupKind], tuple[Registration, ...]]:
    """The chain the operator runs for its controller's one kind (``--controllers``)."""
    return lambda _: chain


def _keyed(set_ctl: SetController, kind: GroupKind) -> Callable[[Hashable], Awaitable[float | None]]:
    """The operator's work-queue keys are ``(namespace, name)``, one queue per kind; the reconcile takes the set's
    ``SetKey``."""
    async def reconcile(key: Hashable) -> float | None:
        ns, name = cast(tuple[str, str], key)
        return await set_ctl.reconcile_async((kind, ns, name))
    return reconcile


def _source(world: AsyncCluster, kind: str, namespaces: tuple[str, ...],
            labels: Selector | None) -> ListWatchSource:
    """The kind's list/watch: the cluster, one namespace, or several merged (``cluster/client/namespaces.py``)."""
    if len(namespaces) <= 1:
        return world.list_watch(kind, namespaces[0] if namespaces else None, labels=labels)
    return MultiNamespaceListWatch([world.list_watch(kind, ns, labels=labels) for ns in namespaces])


def _latest_seen(stores: dict[str, Store]) -> Callable[[str], str]:
    def latest(resource: str) -> str:
        return stores[resource].latest_rv
    return latest


class Operator:
    """``worlds[controller]`` is the API as that controller sees it (its ``StatefulSet`` kind); ``leases`` and
    ``events`` the Lease and Event clients."""

    def __init__(self, worlds: dict[str, AsyncCluster], *, config: OperatorConfig, leases: LeaseClient,
                 events: AsyncEventSink, clock: AsyncClock | None = None, wall_time: Callable[[], float] = time.time,
                 rng: random.Random | None = None, metrics: RuntimeMetrics | None = None,
                 inline: dict[str, Cluster] | None = None, trace: DecisionLog | None = None) -> None:
        self.config = config
        self.clock = clock or WallClock()
        self.wall_time = wall_time
        self.metrics = metrics or RuntimeMetrics()
        self.rng = rng or random.Random()
        chains = operator_kinds(config.controllers)
        # The operator's set controller of each kind, by the table's name (its informer, work queue and metrics name;
        # the world ``worlds`` gives for it): the kind's chain of controllers runs in it.
        names = [operator_kind_name(kind) for kind in chains]
        shared_world = worlds[names[0]] if names else next(iter(worlds.values()))
        # Only what rollwise owns (cluster/client/scope.py): pods and claims by label, member Leases by label.
        selectors = informer_selectors(config.controllers)
        self.informers = {kind: Informer(_source(shared_world, kind, config.namespaces, selectors[kind]), self.clock,
                                         rng=self.rng) for kind in SHARED_KINDS}
        if chains:  # the runs of canary analysis steps, labelled with their set (controllers/statefulset/analysis.py)
            self.informers["AnalysisRun"] = Informer(_source(shared_world, "AnalysisRun", config.namespaces,
                                                             {SET_LABEL: None}), self.clock, rng=self.rng)
        self.set_informers: dict[str, Informer] = {}
        self.analysis_informers: list[Informer] = []
        self.elector = LeaderElector(leases, namespace=config.lease_namespace, name=config.lease_name,
                                     identity=config.identity, clock=self.clock, timings=config.timings,
                                     rng=self.rng, wall_time=wall_time, on_change=self._on_leading,
                                     marks=operator_marks(config.controllers, config.namespaces)) \
            if config.leader_elect else None
        self.recorder = AsyncEventRecorder(events, clock=self.clock, component="rollwise", host=config.identity,
                                      wall_time=wall_time)
        self.metrics.count_events(lambda: self.recorder.sent, lambda: self.recorder.dropped)
        self._elected = asyncio.Event()
        self.controllers: list[ControllerHost[Hashable]] = []
        """Every controller the operator runs, each on the runtime's one controller host (``runtime/host.py``),
        on asyncio workers; the read-your-writes check, leader fence and action log are in the reconciles."""
        self.changes = ChangeDispatcher()
        """Wakes the controllers for each informer event (runtime/dispatch.py): the shared informers feed the set
        controllers, the AnalysisRun controller's own informers feed it (operator/feeds.py)."""
        for shared, informer in self.informers.items():
            informer.add_handler(informer_feed(self.changes, shared, objects=False))
        self.sets: list[SetController] = []
        for kind, chain in chains.items():
            name = operator_kind_name(kind)
            informer = self.set_informers[name] = Informer(_source(worlds[name], "StatefulSet", config.namespaces,
                                                                   None), self.clock, rng=self.rng)
            caches = {k: i.store for k, i in self.informers.items()}
            consistency = ConsistencyStore(_latest_seen({**caches, "StatefulSet": informer.store}))
            queue: WorkQueue[Hashable] = WorkQueue(self.clock, metrics=self.metrics.queue_hooks(name))
            writes = OperatorWrites(name, world=worlds[name], consistency=consistency,
                                    tracked=frozenset({*caches, "StatefulSet"}), pods=caches.get("Pod"),
                                    recorder=self.recorder, is_leader=self.is_leader, actor=config.actor,
                                    inline=(inline or {}).get(name))
            set_ctl = SetController(reads=CacheReads(informer.store, caches, wall_time=wall_time), writes=writes,
                                    gates=config.gates, metrics=self.metrics.plan_samples,
                                    chain=_fixed(chain), decision=operator_decision,
                                    consistency=CacheConsistency(consistency))
            set_ctl.role_probes = RoleProbes(wall_time)
            set_ctl.hand_overs = HandOvers()
            if trace is not None:  # a standby decides too, but only what the leader does is traced
                set_ctl.observers.append(self._when_leading(trace.observer(STATEFULSET_CONTROLLER)))
                set_ctl.quorum_observers.append(self._when_leading(trace.observer(QUORUM_CONTROLLER)))
            ctl: ControllerHost[Hashable] = ControllerHost(name, clock=self.clock,
                                                           awaited=_keyed(set_ctl, kind),
                                                           queue=queue, metrics=self.metrics, workers=config.workers)
            self.changes.add_sets(CachedSets(informer.store), _waker(queue), kinds=(kind,))
            informer.add_handler(SetFeed(self.changes, consistency=consistency, samples=self.metrics.plan_samples,
                                         wall_time=wall_time).on_set)
            self.controllers.append(ctl)
            self.sets.append(set_ctl)
        if ANALYSIS.operator_names[ANALYSIS_RUN] in config.controllers:
            self._host_analysis(worlds.get("analysis", shared_world))
        self.metrics.leader.labels(name=config.lease_name).set(0 if config.leader_elect else 1)

    def _host_analysis(self, world: AsyncCluster) -> None:
        """The AnalysisRun controller: its own informers (runs, templates), queue and workers."""
        name = ANALYSIS.operator_names[ANALYSIS_RUN]
        runs, templates = (Informer(_source(world, kind, self.config.namespaces, None), self.clock, rng=self.rng)
                           for kind in ("AnalysisRun", "AnalysisTemplate"))
        self.analysis_informers = [runs, templates]
        queue: WorkQueue[Hashable] = WorkQueue(self.clock, metrics=self.metrics.queue_hooks(name))
        runner = AnalysisRunController(world=LoopCluster(world), runs=runs.store, templates=templates.store,
                                       queue=queue, recorder=self.recorder, wall_time=self.wall_time,
                                       is_leader=self.is_leader, component=ANALYSIS.actor)
        runner.register(self.changes)
        runs.add_handler(informer_feed(self.changes, "AnalysisRun", sets=False))
        templates.add_handler(informer_feed(self.changes, "AnalysisTemplate", sets=False))
        self.controllers.append(ControllerHost(name, clock=self.clock, awaited=runner.reconcile, queue=queue,
                                               metrics=self.metrics, workers=self.config.workers))

    def _on_leading(self, leading: bool) -> None:
        if leading:
            self._elected.set()
        self.metrics.leader.labels(name=self.config.lease_name).set(1 if leading else 0)
        log.info("%s %s leading", self.config.identity, "started" if leading else "stopped")

    def _when_leading(self, observe: Callable[[SetView, Plan], None]) -> Callable[[SetView, Plan], None]:
        return lambda view, plan: observe(view, plan) if self.is_leader() else None

    def is_leader(self) -> bool:
        return self.elector is None or self.elector.is_leader()

    def all_informers(self) -> list[Informer]:
        return [*self.informers.values(), *self.set_informers.values(), *self.analysis_informers]

    def not_ready(self) -> list[str]:
        return [f"{i.kind} informer" for i in self.all_informers() if not i.has_synced()]

    def unhealthy(self) -> str | None:
        """client-go's healthz adaptor: leading, yet the last renew is older than leaseDuration + 20 s."""
        e = self.elector
        age = e.renew_age() if e is not None else None
        if e is None or age is None:
            return None
        late = age - e.timings.lease_duration_seconds
        return f"leader election: lease not renewed for {late:.0f} s past its duration" if late > 20.0 else None

    async def run(self, stop: asyncio.Event) -> str:
        """Run until ``stop`` is set ("stopped") or the lease is lost ("lost leadership")."""
        tasks = [asyncio.create_task(i.run(), name=f"informer-{i.kind}") for i in self.all_informers()]
        tasks.append(asyncio.create_task(self.recorder.run(), name="recorder"))
        stopping = asyncio.create_task(stop.wait())
        election: asyncio.Task[None] | None = None
        reason = "stopped"
        try:
            synced: asyncio.Future[Any] = asyncio.gather(*(i.wait_synced() for i in self.all_informers()))
            await asyncio.wait({synced, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if stop.is_set():
                synced.cancel()
                # retrieved, or asyncio logs the cancelled gather as an error when it is collected
                await asyncio.gather(synced, return_exceptions=True)
                return reason
            log.info("caches synced")
            if self.elector is not None:
                election = asyncio.create_task(self.elector.run(), name="leader-election")
                elected = asyncio.create_task(self._elected.wait())
                await asyncio.wait({stopping, election, elected}, return_when=asyncio.FIRST_COMPLETED)
                elected.cancel()
            if stop.is_set():
                return reason
            for ctl in self.controllers:
                ctl.start()
            waits: set[asyncio.Future[Any]] = {stopping}
            if election is not None:
                waits.add(election)
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if not stop.is_set():
                reason = "lost leadership"
            return reason
        finally:
            await self._shutdown(tasks, election, stopping)

    async def _shutdown(self, tasks: list[asyncio.Task[None]], election: asyncio.Task[None] | None,
                        stopping: asyncio.Task[bool]) -> None:
        grace = self.config.shutdown_grace_seconds
        await asyncio.gather(*(ctl.drain(grace_seconds=grace) for ctl in self.controllers))
        try:
            await asyncio.wait_for(self.recorder.flush(), timeout=grace)
        except TimeoutError:
            log.warning("events still failing to send at shutdown were dropped (%d queued)", self.recorder.pending())
        for task in [*tasks, stopping]:
            task.cancel()
        await asyncio.gather(*tasks, stopping, return_exceptions=True)
        if election is not None:
            election.cancel()
            await asyncio.gather(election, return_exceptions=True)
        if self.elector is not None and await self.elector.release():
            log.info("released lease %s/%s", self.config.lease_namespace, self.config.lease_name)
