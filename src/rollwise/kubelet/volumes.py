"""The volume expansion a claim goes through once its storage request grows, as a real claim reports it: the
external resizer's ``Resizing`` condition, then ``FileSystemResizePending`` (the volume has grown, the node has
not yet grown the file system), then ``status.capacity.storage`` equal to the request and no condition.

One loop for virtual and wall time (the clock decides, ``runtime/clock.py``), as the kubelet's: the simulator and
``rollwise up`` hand it every claim change; it arms one timer per claim, for its next step. A claim whose request
is above its capacity when it is seen (a restart of ``up``) is picked up the same way. A claim no provisioner
reported on (the simulator's store binds nothing) held what it asked for before the request grew: its first step
writes that capacity, so the claim reports what it holds while it grows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from rollwise.api.claim_templates import capacity_of, quantity_or_none, requested_storage
from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.protocol import Change, Cluster
from rollwise.runtime.clock import Clock, TimerHandle

__all__ = ["EXPANDER", "ExpansionDelays", "VolumeExpander"]

log = logging.getLogger("rollwise.volumes")

EXPANDER = "volume-expander"
"""The actor of the expansion's status writes."""

RESIZING, FS_PENDING = "Resizing", "FileSystemResizePending"


@dataclass(frozen=True, slots=True)
class ExpansionDelays:
    """Seconds from the grown request to each step (a cloud disk takes tens of seconds; these are a lab's)."""

    resizing: float = 0.5
    fs_pending: float = 2.0
    done: float = 4.0


class VolumeExpander:
    def __init__(self, cluster: Cluster, clock: Clock, delays: ExpansionDelays | None = None,
                 after_tick: Callable[[], None] | None = None) -> None:
        self.cluster = cluster
        self.clock = clock
        self.delays = delays or ExpansionDelays()
        self.after_tick = after_tick
        self._timers: dict[tuple[str, str], TimerHandle] = {}

    def claim_changed(self, ch: Change) -> None:
        """Look at a claim someone wrote: a request above the capacity starts (or restarts) its expansion."""
        key = (ch.namespace, ch.name)
        if ch.type == "DELETED":
            self._cancel(key)
            return
        if ch.actor == EXPANDER or key in self._timers:
            return
        before = requested_storage(ch.old) if ch.old is not None else None
        if (ch.obj.get("status") or {}).get("capacity") is None and before is not None:
            old, new = quantity_or_none(before), quantity_or_none(requested_storage(ch.obj))
            if old is not None and new is not None and new > old:
                self._arm(key, 0.0, RESIZING, str(before))  # at once: the capacity it held, then the steps
                return
        if _wants_more(ch.obj):
            self._arm(key, self.delays.resizing, RESIZING)

    def look_at(self, claim: Obj) -> None:
        if _wants_more(claim):
            self._arm((namespace_of(claim), name_of(claim)), self.delays.resizing, RESIZING)

    def stop(self) -> None:
        for key in list(self._timers):
            self._cancel(key)

    def _cancel(self, key: tuple[str, str]) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def _arm(self, key: tuple[str, str], after: float, step: str, held: str = "") -> None:
        self._cancel(key)
        self._timers[key] = self.clock.call_at(self.clock.now() + after, self._step, key[0], key[1], step, held)

    def _step(self, namespace: str, name: str, step: str, held: str) -> None:
        self._timers.pop((namespace, name), None)
        try:
            claim = self.cluster.get("PersistentVolumeClaim", namespace, name)
            status = dict(claim.get("status") or {})
            if held and status.get("capacity") is None:
                status["capacity"] = {"storage": held}
                claim = {**claim, "status": status}
            if not _wants_more(claim):
                return
            now = self.clock.now()
            if step == "done":
                status["capacity"] = {**(status.get("capacity") or {}), "storage": requested_storage(claim)}
                status.pop("conditions", None)
                status.pop("allocatedResourceStatuses", None)
            else:
                status["conditions"] = [{"type": step, "status": "True", "lastProbeTime": None,
                                         "lastTransitionTime": now,
                                         **({"message": "Waiting for user to (re-)start a pod to finish file system "
                                                        "resize of volume on node."} if step == FS_PENDING else {})}]
                status["allocatedResources"] = {"storage": requested_storage(claim)}
            self.cluster.update_status({**claim, "status": status}, actor=EXPANDER)
        except NotFound:
            return
        except ApiStatusError as err:  # a write raced ours (wall time): look again shortly
            log.debug("claim %s/%s: %s", namespace, name, err)
            self._arm((namespace, name), 0.5, step, held)
            return
        finally:
            if self.after_tick is not None:
                self.after_tick()
        if step == RESIZING:
            self._arm((namespace, name), self.delays.fs_pending - self.delays.resizing, FS_PENDING)
        elif step == FS_PENDING:
            self._arm((namespace, name), self.delays.done - self.delays.fs_pending, "done")


def _wants_more(claim: Obj) -> bool:
    request, capacity = quantity_or_none(requested_storage(claim)), quantity_or_none(capacity_of(claim))
    if request is None or capacity is None:
        return False
    if (claim.get("status") or {}).get("capacity") is None:
        return False  # never provisioned (the simulator's store binds nothing): there is no volume to grow
    return request > capacity
