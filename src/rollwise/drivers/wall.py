"""The wall-clock driver: the simulated kubelet and rollwise's controllers on asyncio timers (``rollwise up``).

It mirrors the simulator's loop (``drivers/sim/loop.py``) with the real clock: a change to a set or to one of its
pods marks the set dirty and a reconcile runs on the next loop turn (changes coalesce); ``Plan.requeue_after`` and
failure back-off become ``call_later`` timers; the kubelet looks at a pod when someone other than itself changed
it and again at the time ``advance`` asks for. Simulated durations (kubelet start and ready delays, back-offs,
termination) are divided by ``speed``; the clock itself is never warped, because kubectl computes AGE from it and
an external operator's ``minReadySeconds`` and Lease timing read it too.

The driver writes through the store and then calls ``pump`` so watchers (and the driver itself, through
``listen``) see the change.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.features import FeatureGates
from rollwise.api.meta import (
    Obj,
    annotations_of,
    controller_of,
    labels,
    name_of,
    namespace_of,
    selector_matches,
    uid_of,
)
from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import POD, STATEFULSET_KINDS, GroupKind
from rollwise.controllers.quorum import reconcile_quorum
from rollwise.controllers.statefulset import reconcile
from rollwise.drivers.execute import ControllerEvent, execute
from rollwise.drivers.sets import SetKey, set_key, set_resource
from rollwise.drivers.sim.strategy_override import QUORUM_AWARE_ANNOTATION
from rollwise.drivers.views import set_view
from rollwise.kubelet.agent import PodRuntime, advance
from rollwise.kubelet.profiles import KubeletProfile

__all__ = ["WallDriver", "scaled_profile"]

log = logging.getLogger("rollwise.wall")

STATEFULSET_CONTROLLER = "statefulset-controller"
QUORUM_CONTROLLER = "quorum-aware-controller"
KUBELET = "kubelet"
_BACKOFF_START = 0.005
_BACKOFF_MAX = 300.0


def scaled_profile(profile: KubeletProfile, speed: float) -> KubeletProfile:
    """The profile with every simulated duration divided by ``speed``."""
    if speed == 1:
        return profile
    names = ("start_seconds", "ready_seconds", "termination_seconds", "crash_run_seconds", "crash_exited_seconds",
             "crash_backoff_seconds", "crash_backoff_max_seconds", "pull_error_seconds", "pull_backoff_seconds",
             "pull_backoff_max_seconds", "kill_restart_seconds")
    images = {k: dataclasses.replace(
        v, start_seconds=None if v.start_seconds is None else v.start_seconds / speed,
        ready_seconds=None if v.ready_seconds is None else v.ready_seconds / speed)
        for k, v in profile.images.items()}
    return dataclasses.replace(profile, images=images, **{n: getattr(profile, n) / speed for n in names})


@dataclass(slots=True)
class _PodState:
    runtime: PodRuntime = field(default_factory=PodRuntime.initial)
    where: tuple[str, str] = ("", "")
    wake: asyncio.TimerHandle | None = None
    wake_at: float | None = None


class WallDriver:
    """Runs on the current event loop; ``start()`` after the loop runs, ``stop()`` cancels every timer."""

    def __init__(self, cluster: MemoryCluster, *, listen: Callable[[Callable[[Change], None]], None],
                 pump: Callable[[], None], profile: KubeletProfile | None = None, speed: float = 1.0,
                 gates: FeatureGates | None = None, clock: Callable[[], float] = time.time,
                 statefulset_kinds: tuple[GroupKind, ...] = STATEFULSET_KINDS, kubelet: bool = True) -> None:
        self.cluster = cluster
        self.pump = pump
        self.profile = scaled_profile(profile or KubeletProfile(), speed)
        self.gates = gates or FeatureGates()
        self.clock = clock
        self.kinds = statefulset_kinds
        self.kubelet_on = kubelet
        self.speed = speed
        self._pods: dict[str, _PodState] = {}
        self._dirty: set[SetKey] = set()
        self._timers: dict[SetKey, tuple[float, asyncio.TimerHandle]] = {}
        self._backoff: dict[SetKey, float] = {}
        self._seq = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped = False
        listen(self._on_change)

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        for kind in self.kinds:
            for sts in self.cluster.list(kind):
                self._mark_dirty(set_key(sts))
        if self.kubelet_on:
            for pod in self.cluster.list(POD):
                self._kubelet_soon(pod)

    def stop(self) -> None:
        self._stopped = True
        for _, handle in self._timers.values():
            handle.cancel()
        for state in self._pods.values():
            if state.wake is not None:
                state.wake.cancel()

    # -- the change feed -------------------------------------------------------------------------------------

    def _on_change(self, ch: Change) -> None:
        if self._loop is None or self._stopped:
            return
        if ch.kind == "Pod":
            if self.kubelet_on:
                if ch.type == "DELETED":
                    state = self._pods.pop(uid_of(ch.obj), None)
                    if state is not None and state.wake is not None:
                        state.wake.cancel()
                elif ch.actor != KUBELET:
                    self._kubelet_soon(ch.obj)
            for key in self._owners_of(ch.obj, ch.old):
                self._mark_dirty(key)
        elif ch.resource in self.kinds and not (ch.actor in (STATEFULSET_CONTROLLER, QUORUM_CONTROLLER)
                                            and ch.old is not None and ch.old.get("spec") == ch.obj.get("spec")
                                            and ch.type == "MODIFIED"):
            self._mark_dirty((ch.resource, ch.namespace, ch.name))
        elif ch.kind == "Lease":
            owner = labels(ch.obj).get("rollwise.dev/member-of")
            if owner:
                for kind in self.kinds:
                    self._mark_dirty((kind, ch.namespace, owner))

    def _owners_of(self, pod: Obj, old: Obj | None) -> set[SetKey]:
        keys: set[SetKey] = set()
        ns = namespace_of(pod)
        for obj in (pod, old):
            if obj is None:
                continue
            ref = controller_of(obj)
            if ref is not None and ref.get("kind") == "StatefulSet":
                if set_resource(ref) in self.kinds:
                    keys.add((set_resource(ref), ns, str(ref.get("name"))))
            elif ref is None:
                for kind in self.kinds:
                    for sts in self.cluster.list(kind, ns):
                        if selector_matches((sts.get("spec") or {}).get("selector"), labels(obj)):
                            keys.add(set_key(sts))
        return keys

    # -- the kubelet -----------------------------------------------------------------------------------------

    def _kubelet_soon(self, pod: Obj) -> None:
        uid = uid_of(pod)
        state = self._pods.setdefault(uid, _PodState())
        state.where = (namespace_of(pod), name_of(pod))
        assert self._loop is not None
        self._loop.call_soon(self._kubelet_tick, uid)

    def _kubelet_tick(self, uid: str) -> None:
        state = self._pods.get(uid)
        if state is None or self._stopped:
            return
        try:
            pod = self.cluster.get(POD, *state.where)
        except NotFound:
            self._pods.pop(uid, None)
            return
        if uid_of(pod) != uid:
            return
        now = self.clock()
        step = advance(pod, state.runtime, self.profile, now)
        state.runtime = step.runtime
        try:
            if step.status is not None:
                self.cluster.update_status({**pod, "status": step.status}, actor=KUBELET)
            if step.remove:
                self.cluster.delete(POD, *state.where, grace_period_seconds=0, actor=KUBELET)
        except ApiStatusError as err:  # the pod changed under us: look again soon
            log.debug("kubelet write for %s failed: %s", state.where, err)
            step = dataclasses.replace(step, wake_at=now + 0.05, remove=False)
        self.pump()
        if step.remove:
            self._pods.pop(uid, None)
            return
        if state.wake_at != step.wake_at and state.wake is not None:
            state.wake.cancel()
            state.wake = None
        if step.wake_at is not None and state.wake is None:
            assert self._loop is not None
            state.wake_at = step.wake_at
            state.wake = self._loop.call_later(max(0.0, step.wake_at - self.clock()), self._kubelet_wake, uid)

    def _kubelet_wake(self, uid: str) -> None:
        state = self._pods.get(uid)
        if state is not None:
            state.wake = None
            state.wake_at = None
        self._kubelet_tick(uid)

    # -- the controllers -------------------------------------------------------------------------------------

    def _mark_dirty(self, key: SetKey) -> None:
        if key in self._dirty or self._loop is None:
            return
        self._dirty.add(key)
        self._loop.call_soon(self._reconcile, key)

    def _find(self, key: SetKey) -> Obj | None:
        try:
            return self.cluster.get(*key)
        except NotFound:
            return None

    def _reconcile(self, key: SetKey) -> None:
        self._dirty.discard(key)
        if self._stopped:
            return
        sts = self._find(key)
        if sts is None:
            return
        now = self.clock()
        plan = reconcile(set_view(self.cluster, sts, now=now, gates=self.gates))
        outcome = execute(plan, self.cluster, sts=sts, actor=STATEFULSET_CONTROLLER,
                          emit=lambda ev: self._record_event(sts, ev, STATEFULSET_CONTROLLER))
        delay = plan.requeue_after
        if outcome.error is None and annotations_of(sts).get(QUORUM_AWARE_ANNOTATION):
            delay = self._reconcile_quorum(key, delay)
        self.pump()
        if outcome.error is not None:
            backoff = min(self._backoff.get(key, _BACKOFF_START / 2) * 2, _BACKOFF_MAX)
            self._backoff[key] = backoff
            delay = backoff if delay is None else min(delay, backoff)
        else:
            self._backoff.pop(key, None)
        if delay is not None:
            self._requeue(key, now + delay)

    def _reconcile_quorum(self, key: SetKey, delay: float | None) -> float | None:
        sts = self._find(key)
        if sts is None:
            return delay
        plan = reconcile_quorum(set_view(self.cluster, sts, now=self.clock(), gates=self.gates))
        execute(plan, self.cluster, sts=sts, actor=QUORUM_CONTROLLER,
                emit=lambda ev: self._record_event(sts, ev, QUORUM_CONTROLLER))
        if plan.requeue_after is None:
            return delay
        return plan.requeue_after if delay is None else min(delay, plan.requeue_after)

    def _requeue(self, key: SetKey, at: float) -> None:
        assert self._loop is not None
        current = self._timers.get(key)
        if current is not None:
            if self.clock() < current[0] <= at:
                return
            current[1].cancel()

        def fire() -> None:
            self._timers.pop(key, None)
            self._mark_dirty(key)

        self._timers[key] = (at, self._loop.call_later(max(0.0, at - self.clock()), fire))

    def _record_event(self, sts: Obj, ev: ControllerEvent, component: str) -> None:
        now = self.clock()
        ns = namespace_of(sts)
        try:
            self.cluster.create({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": f"{name_of(sts)}.{int(now * 1e6):x}{next(self._seq)}", "namespace": ns},
                "involvedObject": {"apiVersion": sts.get("apiVersion", "apps/v1"), "kind": "StatefulSet",
                                   "name": name_of(sts), "namespace": ns, "uid": uid_of(sts),
                                   "resourceVersion": sts["metadata"].get("resourceVersion", "")},
                "reason": ev.reason, "message": ev.message, "type": ev.event_type,
                "source": {"component": component}, "reportingComponent": component,
                "firstTimestamp": now, "lastTimestamp": now, "count": 1,
            }, actor=component)
        except ApiStatusError as err:
            log.debug("event for %s not recorded: %s", name_of(sts), err)
