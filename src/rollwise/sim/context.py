"""What the simulator's scenario steps may use of the running simulation.

Steps are given the simulation as a ``SimContext``: they name this protocol, not the loop that implements it, so
imports point one way (the loop imports them, they import this). The application models are the runtime's
(``kubelet/quorum_binding.py``), on the simulation's clock.
"""

from __future__ import annotations

from typing import Protocol

from rollwise.cluster.store.memory import MemoryCluster
from rollwise.scenario.scenario import Scenario
from rollwise.sim.engine import Engine, VirtualClock
from rollwise.sim.record import Recorder
from rollwise.sim.tally import Tallies

__all__ = ["SimContext"]


class SimContext(Protocol):
    scenario: Scenario
    engine: Engine
    clock: VirtualClock
    cluster: MemoryCluster
    recorder: Recorder
    tallies: Tallies

    def drain(self) -> None:
        """Deliver the changes written so far to the simulation's consumers (the controllers, the kubelet)."""
        ...

    def release_hook(self, pod_name: str, namespace: str = "default") -> bool:
        """Remove the pod's pre-delete hook labels and finalizers now; False if there is no such pod."""
        ...

    def pod_fault(self, pod_name: str, fault: str, namespace: str = "default") -> bool:
        """Apply a scenario fault to the pod of that name now; False if there is no such pod."""
        ...
