"""What the operator adds to the one set controller (``runtime/reconciler.SetController``): its informer wiring and
the hooks its reconcile takes.

One reconcile of the operator runs the runtime's reconcile with
1. reads from the informer caches (``runtime/set_reads.CacheReads``), which cannot see this controller's own writes
   until the watch delivers them: the chain stops at the first controller that wrote;
2. ``CacheConsistency``: the KEP-5647 check, every informer must have seen this controller's own last writes for
   the set (a set gone: its record is forgotten);
3. ``OperatorWrites``: the leader fence, one log line per action with the set, the object and the Plan's reason,
   then ``runtime.execute.execute_async`` on the loop through ``LoopCluster`` (UID preconditions on pod deletes),
   every returned resourceVersion recorded for step 2; events to the recorder.

Which change wakes which set is the runtime's one table, asked by the one change dispatcher the operator's
informers feed (``operator/feeds.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj, name_of, uid_of
from rollwise.cluster.client.scope import stamp
from rollwise.cluster.protocol import Cluster
from rollwise.controllers.plan import Plan
from rollwise.operator.world import AsyncCluster, LoopCluster
from rollwise.runtime.cache import Store
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.execute import execute, execute_async
from rollwise.runtime.recorder import AsyncEventRecorder
from rollwise.runtime.recording import WriteNotes
from rollwise.runtime.registrations import Registration
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.workers import CacheBehind, NotLeader

__all__ = ["CacheConsistency", "OperatorWrites"]

log = logging.getLogger("rollwise.runtime.sets")


def _owner(key: SetKey) -> tuple[str, str]:
    """The consistency record's key: a set's ``(namespace, name)`` (one record store per controller and kind)."""
    return key[1], key[2]


class CacheConsistency:
    """The read-your-writes check over ``consistency`` (``reconciler.Consistency``)."""

    def __init__(self, consistency: ConsistencyStore) -> None:
        self.store = consistency

    def check(self, key: SetKey, sts: Obj) -> None:
        behind = self.store.check(_owner(key), uid_of(sts))  # a set recreated under the name starts clean
        if behind:
            raise CacheBehind(", ".join(behind))

    def forget(self, key: SetKey) -> None:
        self.store.clear(_owner(key))


class OperatorWrites:
    """Executes an operator's plan (``reconciler.AsyncSetWrites``): under ``actor``, only while ``is_leader``,
    logged action by action as ``name``; through ``world`` (or ``inline``, an in-process store: tests), each write
    noted for the consistency check; events to ``recorder``."""

    def __init__(self, name: str, *, world: AsyncCluster, consistency: ConsistencyStore, tracked: frozenset[str],
                 pods: Store | None, recorder: AsyncEventRecorder | None, is_leader: Callable[[], bool], actor: str,
                 inline: Cluster | None = None) -> None:
        self.name = name
        self.world = world
        self.consistency = consistency
        self.tracked = tracked
        self.pods = pods
        self.recorder = recorder
        self.is_leader = is_leader
        self.actor = actor
        self.inline = inline

    async def write(self, row: Registration, key: SetKey, sts: Obj, plan: Plan) -> ApiStatusError | None:
        _, ns, name = key
        if not self.is_leader():
            raise NotLeader(f"{ns}/{name}: not the leader; {len(plan.actions)} actions not taken")
        for action in plan.actions:
            kind, obj = type(action).__name__, _target(action)
            reason = getattr(action, "reason", "") or getattr(action, "message", "")
            log.info("%s %s/%s: %s%s: %s", self.name, ns, name, kind, f" {obj}" if obj else "", reason,
                     extra={"controller": self.name, "set": f"{ns}/{name}", "action": kind, "object": obj or None,
                            "reason": reason})
        # What the operator creates carries the label its informers select by (cluster/client/scope.py).
        notes = WriteNotes(self.consistency, owner=_owner(key), owner_uid=uid_of(sts), tracked=self.tracked,
                           prepare=stamp)
        if self.inline is not None:
            outcome = execute(plan, self.inline, sts=sts, actor=self.actor, hooks=notes)
        else:
            outcome = await execute_async(plan, LoopCluster(self.world, pod_uid=self._pod_uid), sts=sts,
                                          actor=self.actor, hooks=notes)
        if self.recorder is not None:
            for event in outcome.events:
                self.recorder.record(sts, event)
        return outcome.error

    def _pod_uid(self, namespace: str, pod: str) -> str | None:
        cached = self.pods.get(namespace, pod) if self.pods is not None else None
        return uid_of(cached) if cached is not None else None


def _target(action: Any) -> str:
    for attr in ("name", "pod", "claim", "revision"):
        value = getattr(action, attr, None)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, dict):
            return name_of(value)
    return ""
