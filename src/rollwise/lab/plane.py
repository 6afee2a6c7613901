"""A lab run's control plane: ``rollwise up`` without its HTTP server — the same wall-clock driver and process runtime.

The store is the world's memory store with the world's admission (StatefulSet defaulting and validation, pod
immutability); its change feed is pumped after every write to the same listeners ``up`` has: the wall-clock driver
(``local/driver.py``: the controllers on asyncio timers, with ``local/processes.py`` running every ``etcd:*`` pod
as a real process) and, for the lab alone, the simulator's ``Recorder``, so a real run yields a result document of
spec/simulate.md (events, summary) that ``cli/plot.py`` draws beside the model's.

Time is the plane's own monotonic clock in seconds since it was made; the store stamps objects with it. Everything
runs on one event loop: a lab script is a coroutine that writes through the plane and awaits ``run_until``.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, controller_of, name_of, namespace_of, uid_of
from rollwise.cluster.store.admission import Admission
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.cluster.store.pump import FeedPump
from rollwise.kubelet.process.runtime import ProcessRuntime
from rollwise.local.driver import WallDriver
from rollwise.local.processes import ProcessKubelet
from rollwise.runtime.actors import CONTROLLERS
from rollwise.sim.record import PodLists, Recorder

__all__ = ["LabPlane"]


class LabPlane:
    """``async with LabPlane(runtime, gates=...) as plane:`` starts the driver; leaving stops every process."""

    def __init__(self, runtime: ProcessRuntime, *, gates: FeatureGates, tick: float = 0.05) -> None:
        origin = time.monotonic()
        self.clock: Callable[[], float] = lambda: time.monotonic() - origin
        self.runtime, self.tick = runtime, tick
        self.cluster = MemoryCluster(clock=self.clock, admit=Admission(gates=gates).hooks())
        self.feed = FeedPump(self.cluster)
        self.recorder = Recorder(controllers=frozenset(CONTROLLERS))
        self.feed.listen(self.recorder.on_change)
        self.driver = WallDriver(self.cluster, listen=self.feed.listen, pump=self.feed.pump, gates=gates,
                                 clock=self.clock,
                                 processes=ProcessKubelet(runtime, self.cluster, pump=self.feed.pump,
                                                          clock=self.clock, tick_seconds=tick))

    async def __aenter__(self) -> LabPlane:
        self.driver.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.driver.stop()

    # -- what a scenario does ------------------------------------------------------------------------------------

    def create(self, obj: Obj) -> Obj:
        out = self.cluster.create(copy.deepcopy(obj), actor="user")
        self.feed.pump()
        return out

    def patch_set(self, name: str, merge: Mapping[str, Any], namespace: str = "default") -> Obj:
        out = self.cluster.patch("StatefulSet", namespace, name, merge, actor="user")
        self.feed.pump()
        return out

    def delete(self, kind: str, name: str, namespace: str = "default") -> None:
        self.cluster.delete(kind, namespace, name, actor="user")
        self.feed.pump()

    def pod_fault(self, pod_name: str, fault: str, namespace: str = "default") -> None:
        pod = self.cluster.get("Pod", namespace, pod_name)
        self.runtime.fault(pod, fault, self.clock())

    def pods_of(self, sts: Obj) -> list[Obj]:
        return [p for p in self.cluster.list("Pod", namespace_of(sts))
                if (controller_of(p) or {}).get("uid") == uid_of(sts)]

    async def run_until(self, done: Callable[[], bool], *, timeout: float) -> bool:
        """Let the driver run until ``done()`` holds (True) or ``timeout`` seconds pass (False), sampling the
        recorder every tick."""
        end = self.clock() + timeout
        while True:
            self._sample()
            if done():
                return True
            if self.clock() >= end:
                return False
            await asyncio.sleep(self.tick)

    def _sample(self) -> None:
        sets = self.cluster.list("StatefulSet")
        now = self.clock()
        pods = PodLists({name_of(s): self.pods_of(s) for s in sets}, label=lambda _ns, name: name, now=now)
        self.recorder.sample(now, sets, pods)
