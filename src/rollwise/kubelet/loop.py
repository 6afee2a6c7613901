"""The simulated kubelet's drive loop over a clock and a store: one loop for virtual and wall time.

The pure kubelet (``kubelet.agent.advance``) says what a pod's status is at a time and when to look again; this loop
runs it against a store, the same way for the simulator and for ``rollwise up`` (only the clock differs,
``runtime/clock.py``):

1. a pod someone other than the kubelet changed is looked at now (``pod_changed``; ``look_at`` for a pod found at
   start); a deleted one is forgotten, its wake-up cancelled;
2. a look (``_tick``) reads the pod, advances its runtime to now (an application model may decide its readiness:
   ``readiness``), writes the status, removes the pod once its termination is over, and arms one timer for the time
   ``advance`` asks to look again (a pending timer for that time stays, another is cancelled);
3. a fault (``fault``) is recorded in the pod's runtime and applied by an immediate look; ``poke`` asks for a look
   now (an application model changed the pod's readiness).

What differs between the drivers are hooks: ``notes`` gets what each look saw happen (``up`` writes the kubelet's
Events from them), ``after_tick`` runs after each look (``up`` delivers the writes to the watchers there),
``retry_seconds`` looks again after a refused write (in ``up`` a client may change the pod between the read and the
write; in virtual time nothing writes in between, so the simulator leaves it None and a refusal surfaces as the bug
it is), ``handed_over`` lets the store keep the status objects rather than copy them (the simulator: statuses share
their parts, bench/scale.py). Which pods the loop runs is the driver's choice: ``up`` hands pods that run as real
processes to ``local/processes.py`` instead.

The loop keeps one small record per pod, by uid: at 10,000 replicas each table's entry was a read from memory of its
own (bench/scale.py), and a timer carries the uid rather than a closure (``sim/engine.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.cluster.protocol import Change, Cluster
from rollwise.kubelet.agent import Note, PodRuntime, advance, apply_fault
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.runtime.clock import Clock, TimerHandle

__all__ = ["KUBELET", "Kubelet", "KubeletPod", "Readiness"]

log = logging.getLogger("rollwise.kubelet")

KUBELET = "kubelet"
"""The actor of the kubelet's writes (a change it wrote is not looked at again)."""

Readiness = Callable[[Obj], Mapping[str, tuple[bool, float]] | None]
"""An application model's say on a pod's containers: container -> (ready, since when); None: the profile decides."""


@dataclass(slots=True)
class KubeletPod:
    """What the kubelet keeps of one pod (by uid): where it is stored, its runtime, and its pending wake-up. One
    record rather than one entry in each of three tables: a look reads them all."""

    namespace: str
    name: str
    runtime: PodRuntime | None = None
    wake_at: float | None = None
    wake: TimerHandle | None = None
    """The timer for ``wake_at`` (None: no wake-up pending)."""


class Kubelet:
    """The simulated kubelet of one store on one clock (see the module's docstring for the hooks)."""

    def __init__(self, cluster: Cluster, clock: Clock, profile: KubeletProfile, *,
                 readiness: Readiness | None = None, notes: Callable[[Obj, tuple[Note, ...]], None] | None = None,
                 after_tick: Callable[[], None] | None = None, retry_seconds: float | None = None,
                 handed_over: bool = False) -> None:
        self.cluster = cluster
        self.clock = clock
        self.profile = profile
        self.readiness = readiness
        self.notes = notes
        self.after_tick = after_tick
        self.retry_seconds = retry_seconds
        self.handed_over = handed_over
        self.pods: dict[str, KubeletPod] = {}
        self.stopped = False
        self._look, self._woken = self._tick, self._wake
        """The timers' callbacks, bound once (a timer holds the method and the pod's uid)."""

    def stop(self) -> None:
        """Look at no pod again; cancel every pending wake-up."""
        self.stopped = True
        for kept in self.pods.values():
            if kept.wake is not None:
                kept.wake.cancel()
                kept.wake = kept.wake_at = None

    # -- what wakes it -----------------------------------------------------------------------------------------

    def pod_changed(self, ch: Change) -> None:
        """A pod changed: forget it when deleted, look at it now when someone else wrote it."""
        if ch.type == "DELETED":
            self.forget(uid_of(ch.obj))
        elif ch.actor != KUBELET:
            uid = uid_of(ch.obj)
            self._at(uid, ch.namespace, ch.name)
            self.clock.call_at(self.clock.now(), self._look, uid)

    def look_at(self, pod: Obj) -> None:
        """Look at a pod now (one already in the store when the kubelet starts)."""
        uid = uid_of(pod)
        self._at(uid, namespace_of(pod), name_of(pod))
        self.clock.call_at(self.clock.now(), self._look, uid)

    def poke(self, uid: str) -> None:
        """Look at a pod again now (an application model changed its readiness)."""
        if uid in self.pods and not self.stopped:
            self.clock.call_at(self.clock.now(), self._look, uid)

    def fault(self, pod: Obj, fault: str, *, container: str | None = None) -> None:
        """Apply a pod fault (``kubelet.agent.FAULTS``) to this pod object now. ValueError: an unknown fault."""
        uid = uid_of(pod)
        kept = self._at(uid, namespace_of(pod), name_of(pod))
        kept.runtime = apply_fault(pod, kept.runtime or PodRuntime.initial(), fault, self.clock.now(),
                                   container=container)
        self._tick(uid)

    def forget(self, uid: str) -> None:
        """The pod is gone: drop its record and its wake-up."""
        gone = self.pods.pop(uid, None)
        if gone is not None and gone.wake is not None:
            gone.wake.cancel()

    def _at(self, uid: str, namespace: str, name: str) -> KubeletPod:
        """The pod's record, made or moved to where the pod is stored now."""
        kept = self.pods.get(uid)
        if kept is None:
            kept = self.pods[uid] = KubeletPod(namespace, name)
        else:
            kept.namespace, kept.name = namespace, name
        return kept

    # -- a look ------------------------------------------------------------------------------------------------

    def _wake(self, uid: str) -> None:
        kept = self.pods.get(uid)
        if kept is not None:
            kept.wake_at = kept.wake = None
        self._tick(uid)

    def _tick(self, uid: str) -> None:
        kept = self.pods.get(uid)
        if kept is None or self.stopped:
            return
        namespace, name = kept.namespace, kept.name
        try:
            pod = self.cluster.get("Pod", namespace, name)
        except NotFound:
            self.forget(uid)
            return
        if uid_of(pod) != uid:
            return
        now = self.clock.now()
        step = advance(pod, kept.runtime or PodRuntime.initial(), self.profile, now,
                       readiness=self.readiness(pod) if self.readiness is not None else None)
        kept.runtime = step.runtime
        if self.notes is not None:
            self.notes(pod, step.notes)
        wake_at, remove = step.wake_at, step.remove
        try:
            if step.status is not None:
                self.cluster.update_status({**pod, "status": step.status}, actor=KUBELET,
                                           handed_over=self.handed_over)
            if remove:
                self.cluster.delete("Pod", namespace, name, grace_period_seconds=0, actor=KUBELET)
        except ApiStatusError as err:
            if self.retry_seconds is None:
                raise
            log.debug("kubelet write for %s/%s failed: %s", namespace, name, err)
            wake_at, remove = now + self.retry_seconds, False  # the pod changed under us: look again soon
        if self.after_tick is not None:
            self.after_tick()
        if remove:
            return  # the pod's deletion forgets it
        if kept.wake is not None and kept.wake_at != wake_at:
            # The wake-up goes with its timer: a cancelled timer left on record would be taken for the next
            # wake-up at the same time, which then never fires (a pod left terminating for ever).
            kept.wake.cancel()
            kept.wake_at = kept.wake = None
        if wake_at is not None and kept.wake is None:
            kept.wake = self.clock.call_at(wake_at, self._woken, uid)
            kept.wake_at = wake_at
