"""The Deployment and ReplicaSet controllers of `rollwise up`, on the event loop beside the StatefulSet ones.

A change to a Deployment, a ReplicaSet (or ReplicationController) or a pod marks the objects it concerns dirty:
the object itself, the owner named by its controller reference, and for a pod also every set in its namespace
that may adopt it. Each dirty key is reconciled on the next loop turn (changes coalesce): its view is read from
the store, the pure decision (``controllers/deployment``, ``controllers/replicaset``) makes a plan, and this
module executes it, writing as ``deployment-controller`` and ``replicaset-controller`` do on a cluster.
A failed write (a conflict with another writer) looks again shortly; ``requeue_after`` becomes a timer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from rollwise.api.errors import AlreadyExists, ApiStatusError, NotFound
from rollwise.api.meta import controller_of, namespace_of
from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import POD, GroupKind
from rollwise.controllers import deployment, replicaset
from rollwise.controllers.workload import Create, Delete, Update, UpdateStatus, WorkloadPlan

__all__ = ["DEPLOYMENT", "REPLICASET", "REPLICATION_CONTROLLER", "WorkloadControllers"]

log = logging.getLogger("rollwise.workloads")

DEPLOYMENT = GroupKind("apps", "Deployment")
REPLICASET = GroupKind("apps", "ReplicaSet")
REPLICATION_CONTROLLER = GroupKind("", "ReplicationController")
_SETS = (REPLICASET, REPLICATION_CONTROLLER)
_ACTOR = {DEPLOYMENT: "deployment-controller", REPLICASET: "replicaset-controller",
          REPLICATION_CONTROLLER: "replication-controller"}
_RETRY_SECONDS = 0.2
Key = tuple[GroupKind, str, str]


class WorkloadControllers:
    """``start()`` on the running loop, ``stop()`` cancels every timer."""

    def __init__(self, cluster: MemoryCluster, *, listen: Callable[[Callable[[Change], None]], None],
                 pump: Callable[[], None], clock: Callable[[], float] = time.time,
                 kinds: tuple[GroupKind, ...] = (DEPLOYMENT, REPLICASET, REPLICATION_CONTROLLER)) -> None:
        self.cluster = cluster
        self.pump = pump
        self.clock = clock
        self.kinds = kinds
        self._dirty: set[Key] = set()
        self._timers: dict[Key, asyncio.TimerHandle] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scheduled = False
        listen(self._on_change)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        for gk in self.kinds:
            for obj in self.cluster.list(gk):
                self._mark((gk, namespace_of(obj), obj["metadata"]["name"]))

    def stop(self) -> None:
        self._loop = None
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    def _on_change(self, ch: Change) -> None:
        if self._loop is None:
            return
        gk = self.cluster.resources.of(ch.obj)
        namespace = namespace_of(ch.obj)
        if gk in self.kinds:
            self._mark((gk, namespace, ch.obj["metadata"]["name"]))
        ref = controller_of(ch.obj)
        if ref is not None:
            owner = self.cluster.resources.of({"apiVersion": ref.get("apiVersion"), "kind": ref.get("kind")})
            if owner in self.kinds:
                self._mark((owner, namespace, str(ref.get("name"))))
        elif gk == POD and ch.type != "DELETED":
            for set_kind in _SETS:  # an orphan pod: any set of its namespace may adopt it
                if set_kind in self.kinds:
                    for rs in self.cluster.list(set_kind, namespace):
                        self._mark((set_kind, namespace, rs["metadata"]["name"]))

    def _mark(self, key: Key) -> None:
        self._dirty.add(key)
        if not self._scheduled and self._loop is not None:
            self._scheduled = True
            self._loop.call_soon(self._drain)

    def _drain(self) -> None:
        self._scheduled = False
        keys, self._dirty = self._dirty, set()
        for key in sorted(keys, key=lambda k: (k[0] != DEPLOYMENT, k)):  # deployments first: they scale the sets
            if self._loop is None:
                return
            self._reconcile(key)

    def _reconcile(self, key: Key) -> None:
        gk, namespace, name = key
        try:
            obj = self.cluster.get(gk, namespace, name)
        except NotFound:
            return
        now = self.clock()
        pods = self.cluster.list(POD, namespace)
        if gk == DEPLOYMENT:
            plan = deployment.reconcile(deployment.DeploymentView(
                obj, self.cluster.list(REPLICASET, namespace), pods, now))
        else:
            plan = replicaset.reconcile(replicaset.ReplicaSetView(obj, pods, now))
        failed = self._execute(plan, _ACTOR[gk])
        self.pump()
        after = _RETRY_SECONDS if failed else plan.requeue_after
        if after is not None and self._loop is not None:
            old = self._timers.pop(key, None)
            if old is not None:
                old.cancel()
            self._timers[key] = self._loop.call_later(after, self._requeue, key)

    def _requeue(self, key: Key) -> None:
        self._timers.pop(key, None)
        self._mark(key)

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
