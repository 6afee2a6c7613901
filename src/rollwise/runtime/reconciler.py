"""The StatefulSet controllers' reconcile of one set: one class for every driver (the simulator, ``up`` and the
operator).

One key is one set: its view is rebuilt from what the driver reads every time (level-triggered, nothing remembered
between calls); the controllers of its kind decide in the chain order of ``runtime/registrations.py`` (the
StatefulSet controller, then, for a set handed to it, the quorum-aware controller, DEP-07), each plan is executed,
and the work queue requeues the key when a plan asks (``requeue_after``, the soonest of the chain's) or backs off
when a write failed. The reconcile is written once (``_chain_steps``); what differs between drivers is named:

* ``reads``: where the set and its view come from (``runtime/set_reads.py``: the store, with or without the census
  index; or informer caches);
* ``writes``: how a plan is executed (``StoreWrites``: on the store, events to the recorder as they happen; the
  operator's ``operator/sets.OperatorWrites``: leader fence, one log line per action, then through the API);
* ``consistency``: the operator's KEP-5647 read-your-writes check before anything is decided;
* ``reconcile`` (synchronous, on the clock's timers: the simulator and ``up``) or ``reconcile_async`` (on asyncio
  workers: the operator, whose role probes then run on a thread and whose writes are awaited);
* ``stands_down``: ``up`` leaves a controller's decisions to a leading operator (local/standdown.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Protocol, cast

from rollwise.api.errors import ApiStatusError
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import GroupKind
from rollwise.controllers.plan import Plan
from rollwise.controllers.view import SetView
from rollwise.runtime.actors import QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.runtime.clock import Clock
from rollwise.runtime.execute import execute
from rollwise.runtime.hand_overs import HandOvers
from rollwise.runtime.host import ControllerHost
from rollwise.runtime.limiter import ItemExponentialRateLimiter
from rollwise.runtime.queue import WorkQueue
from rollwise.runtime.recorder import ControllerEvents
from rollwise.runtime.registrations import QUORUM, Registration, chain_for
from rollwise.runtime.role_probes import RoleProbes
from rollwise.runtime.samples import MetricsRegistry
from rollwise.runtime.set_reads import StoreReads
from rollwise.runtime.setkeys import SetKey, set_resource

__all__ = ["AsyncSetWrites", "Consistency", "SetController", "SetReads", "SetWrites", "StoreWrites"]

_ROUNDS_PER_ORDINAL = 8

Observer = Callable[[SetView, Plan], None]
Decide = Callable[[SetView], Plan]


class SetReads(Protocol):
    sees_own_writes: bool
    """Whether a read right after this controller's write sees it. Only then may the chain go on after a controller
    wrote: the next one must decide on the world the first one left, and a cache that has not seen the write yet
    would show it the world before (it would undo or repeat the write). Otherwise the chain stops at the first
    controller that wrote, and the reconcile its own write wakes goes on from there."""

    def get(self, key: SetKey) -> Obj | None: ...

    def view(self, sts: Obj, *, gates: FeatureGates, fresh: bool) -> SetView: ...


class SetWrites(Protocol):
    def write(self, row: Registration, key: SetKey, sts: Obj, plan: Plan) -> ApiStatusError | None:
        """Execute ``plan`` for ``row``; the first error, if any."""
        ...


class AsyncSetWrites(Protocol):
    async def write(self, row: Registration, key: SetKey, sts: Obj, plan: Plan) -> ApiStatusError | None: ...


class Consistency(Protocol):
    """The read-your-writes check (KEP-5647): ``check`` raises ``CacheBehind`` while the reads have not seen this
    controller's own last writes for the set; ``forget`` drops the set's record once it is gone."""

    def check(self, key: SetKey, sts: Obj) -> None: ...

    def forget(self, key: SetKey) -> None: ...


class StoreWrites:
    """Executes plans on a store, each event recorded as it happens under the deciding controller's name."""

    def __init__(self, cluster: Cluster, recorder: ControllerEvents) -> None:
        self.cluster = cluster
        self.recorder = recorder

    def write(self, row: Registration, key: SetKey, sts: Obj, plan: Plan) -> ApiStatusError | None:
        emit = lambda ev: self.recorder.record(sts, ev, row.actor)  # noqa: E731
        return execute(plan, self.cluster, sts=sts, actor=row.actor, emit=emit).error


@dataclass(frozen=True, slots=True)
class _Probe:
    """Ask the set's role-probed members who leads (blocking GETs)."""

    view: SetView


@dataclass(frozen=True, slots=True)
class _Write:
    row: Registration
    sts: Obj
    plan: Plan


_Steps = Generator[_Probe | _Write, Any, tuple[float | None, ApiStatusError | None]]
"""A reconcile's steps: it yields what needs I/O and is sent back the answer (a ``_Probe``'s answers by pod, a
``_Write``'s first error or None), and returns when to look again and the error that stopped it."""


class SetController:
    """Reconciles sets (``SetKey``s) of the kinds ``chain`` gives controllers for.

    ``chain(kind)``: the controllers of a kind's sets in chain order (default: the table's, the quorum-aware one
    left out when not ``quorum``); ``decision(row, kind)``: how a row decides for the kind (default: its
    ``decide``). ``observers`` and ``quorum_observers`` are called with every view and the plan decided from it,
    before execution. ``metrics`` records every plan's samples."""

    def __init__(self, *, reads: SetReads, writes: SetWrites | AsyncSetWrites, gates: FeatureGates,
                 metrics: MetricsRegistry | None = None, quorum: bool = True,
                 chain: Callable[[GroupKind], tuple[Registration, ...]] | None = None,
                 decision: Callable[[Registration, GroupKind], Decide] | None = None,
                 consistency: Consistency | None = None) -> None:
        self.reads = reads
        self.writes = writes
        self.gates = gates
        self.metrics = metrics
        self.quorum = quorum
        """False: the quorum-aware controller is left to an external operator (``up --controllers=-quorum``)."""
        self.consistency = consistency
        self._chain = chain if chain is not None else self._table_chain
        self._decision = decision if decision is not None else lambda row, _: row.decide
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
        self.host: ControllerHost[SetKey] | None = None
        """The controller host running the inline reconcile (``inline``); the operator makes its own."""

    @classmethod
    def inline(cls, cluster: Cluster, *, clock: Clock, gates: FeatureGates, recorder: ControllerEvents,
               metrics: MetricsRegistry | None = None, quorum: bool = True, census: bool = False,
               backoff_max: float = 1000.0, settle_guard: bool = True,
               after_each: Callable[[], None] | None = None) -> SetController:
        """The simulator's and ``up``'s: reads and writes on ``cluster``, reconciled inline on ``clock``'s timers by
        the one controller host. ``backoff_max``: the cap of a failing key's back-off; ``settle_guard``: raise
        when a set does not settle in one instant (virtual time, where instants repeat); ``after_each``: called
        after every reconcile (``up`` delivers the reconcile's writes to its watchers then)."""
        ctl = cls(reads=StoreReads(cluster, now=clock.now, census=census), writes=StoreWrites(cluster, recorder),
                  gates=gates, metrics=metrics if metrics is not None else MetricsRegistry(), quorum=quorum)
        # Per-key back-off only: a token bucket would make a simulated rollout's timing depend on how many other
        # keys failed, which a reader of one set's timeline cannot see.
        ctl.host = ControllerHost(
            STATEFULSET_CONTROLLER, clock=clock, inline=ctl.reconcile,
            limiter=ItemExponentialRateLimiter(0.005, backoff_max), after_each=after_each,
            rounds_for=ctl._rounds_for, max_rounds_per_instant=200 if settle_guard else None)
        return ctl

    @property
    def queue(self) -> WorkQueue[SetKey]:
        assert self.host is not None, "an operator's controller is hosted by the operator"
        return self.host.queue

    def seen(self, change: Change) -> None:
        """A change the driver read from the feed (the store's census index, when there is one)."""
        if isinstance(self.reads, StoreReads):
            self.reads.seen(change)

    def _rounds_for(self, key: SetKey) -> int:
        """How many more reconciles one instant may take before the set counts as stuck in a loop. With zero kubelet
        timings a whole OrderedReady rollout happens at one instant, a few reconciles per ordinal (create, ready,
        delete, gone; measured about 3), so the bound grows with the set's size rather than being one constant."""
        sts = self.reads.get(key)
        if sts is None:
            return 0
        replicas = (sts.get("spec") or {}).get("replicas")
        return _ROUNDS_PER_ORDINAL * (replicas if isinstance(replicas, int) and replicas > 0 else 1)

    def preview(self, sts: Obj) -> list[tuple[str, Plan]]:
        """What each controller would do to ``sts`` now, by controller name, nothing executed (``rollwise plan``):
        the StatefulSet controller's plan, and the quorum-aware controller's where it has something to do."""
        view = self.reads.view(sts, gates=self.gates, fresh=False)
        plans = []
        kind = set_resource(sts)
        for i, row in enumerate(chain_for(kind)):
            plan = self._decision(row, kind)(view)
            if i == 0 or plan.actions or plan.blocked:
                plans.append((row.actor, plan))
        return plans

    # -- one reconcile ---------------------------------------------------------------------------------------

    def reconcile(self, key: SetKey) -> tuple[float | None, bool]:
        """Reconcile one set in place (the inline host's contract): when to look again (seconds, or None) and
        whether a write failed."""
        steps = self._chain_steps(key)
        reply: object = None
        try:
            while True:
                step = steps.send(reply)
                if isinstance(step, _Probe):
                    assert self.role_probes is not None
                    reply = self.role_probes.answers(step.view)
                else:
                    reply = self.writes.write(step.row, key, step.sts, step.plan)
                    if asyncio.iscoroutine(reply):
                        reply.close()
                        raise TypeError("awaited writes are carried out by reconcile_async")
        except StopIteration as done:
            requeue, error = done.value
        return requeue, error is not None

    async def reconcile_async(self, key: SetKey) -> float | None:
        """Reconcile one set on an asyncio worker (``workers.Controller``'s contract): when to look again; a failed
        write raises. The probes' GETs block (each bounded by the probe's timeoutSeconds): a thread, not the loop."""
        steps = self._chain_steps(key)
        reply: object = None
        try:
            while True:
                step = steps.send(reply)
                if isinstance(step, _Probe):
                    assert self.role_probes is not None
                    reply = await asyncio.to_thread(self.role_probes.answers, step.view)
                else:
                    written = self.writes.write(step.row, key, step.sts, step.plan)
                    reply = await written if asyncio.iscoroutine(written) else written
        except StopIteration as done:
            requeue, error = cast(tuple[float | None, ApiStatusError | None], done.value)
        if error is not None:
            raise error
        return requeue

    def _chain_steps(self, key: SetKey) -> _Steps:
        """The reconcile, as steps the two drivers above carry out (``_Probe``, ``_Write``): each controller of the
        chain that runs for the set decides on a view of it, its observers see the plan, and its actions are
        written; after a write the chain goes on only where ``reads.sees_own_writes`` (``SetReads``)."""
        sts = self.reads.get(key)
        if sts is None:
            if self.consistency is not None:
                self.consistency.forget(key)
            return None, None
        if self.consistency is not None:
            self.consistency.check(key, sts)  # a set recreated under the name starts clean
        requeue: float | None = None
        view: SetView | None = None
        fresh = True
        for row in self._chain(key[0]):
            if not row.runs_for(sts) or (self.stands_down is not None and self.stands_down(row, key)):
                continue
            if view is None:
                view = self.reads.view(sts, gates=self.gates, fresh=fresh)
            seen = view
            if row is QUORUM and self.role_probes is not None:
                seen = dataclasses.replace(view, probes=(yield _Probe(view)))
            if row is QUORUM and self.hand_overs is not None:
                self.hand_overs.answer(seen)
            plan = self._decision(row, key[0])(seen)
            for observe in self._observers[row.actor]:
                observe(seen, plan)
            if self.metrics is not None:
                self.metrics.record(plan.metrics)
            requeue = _sooner(requeue, plan.requeue_after)
            if not plan.actions:
                continue
            error: ApiStatusError | None = yield _Write(row, sts, plan)
            if error is not None or not self.reads.sees_own_writes:
                return requeue, error
            # The next controller decides on what this one left.
            found = self.reads.get(key)
            if found is None:
                break
            sts, view, fresh = found, None, False
        return requeue, None

    def _table_chain(self, kind: GroupKind) -> tuple[Registration, ...]:
        return chain_for(kind, runs=lambda r: self.quorum or r is not QUORUM)


def _sooner(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)
