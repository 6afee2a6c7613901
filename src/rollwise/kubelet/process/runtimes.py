"""Several process runtimes as one kubelet's: etcd members (``etcd:*``) and Patroni members (``patroni:*``) side by
side under one ``up``. Each pod goes to the first runtime whose pattern one of its images matches, and stays there
(a runtime remembers its pods by uid); calls about a pod by name go to the runtime that runs it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rollwise.api.meta import Obj
from rollwise.kubelet.process.member import ProbeSettings
from rollwise.kubelet.process.runtime import MemberLease, PodSync, ProcessRuntime

__all__ = ["Runtimes"]


class Runtimes:
    """``ProcessRuntime``'s driver interface over several runtimes (the first is the default one)."""

    def __init__(self, first: ProcessRuntime, *more: ProcessRuntime) -> None:
        self.all = (first, *more)

    @property
    def probe(self) -> ProbeSettings:
        return self.all[0].probe

    @property
    def clock(self) -> Callable[[], float]:
        return self.all[0].clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        for runtime in self.all:
            runtime.clock = clock

    def _for(self, pod: Mapping[str, Any]) -> ProcessRuntime:
        for runtime in self.all:
            if runtime.matches(pod):
                return runtime
        raise ValueError(f"no process runtime runs pod {(pod.get('metadata') or {}).get('name')}")

    def _running(self, namespace: str, name: str) -> ProcessRuntime:
        for runtime in self.all:
            if runtime.runs(namespace, name):
                return runtime
        raise KeyError(f"member {name} is not running here")

    def matches(self, pod: Mapping[str, Any]) -> bool:
        return any(r.matches(pod) for r in self.all)

    def runs(self, namespace: str, name: str) -> bool:
        return any(r.runs(namespace, name) for r in self.all)

    def sync(self, pod: Obj, sts: Mapping[str, Any], now: float) -> PodSync:
        return self._for(pod).sync(pod, sts, now)

    def fault(self, pod: Mapping[str, Any], fault: str, now: float) -> None:
        self._for(pod).fault(pod, fault, now)

    def member_leases(self) -> list[MemberLease]:
        return [lease for r in self.all for lease in r.member_leases()]

    def move_leader(self, namespace: str, name: str, target: str) -> None:
        self._running(namespace, name).move_leader(namespace, name, target)

    def probe_address(self, pod: Mapping[str, Any], port: int) -> tuple[str, int] | None:
        return next((found for r in self.all if (found := r.probe_address(pod, port)) is not None), None)

    def exec_context(self, namespace: str, name: str) -> tuple[dict[str, str], Path] | None:
        return next((found for r in self.all if (found := r.exec_context(namespace, name)) is not None), None)

    def claim_deleted(self, namespace: str, claim: str) -> None:
        for runtime in self.all:
            runtime.claim_deleted(namespace, claim)

    def pod_removed(self, pod: Mapping[str, Any]) -> None:
        for runtime in self.all:
            runtime.pod_removed(pod)

    def pids(self) -> list[int]:
        return [pid for r in self.all for pid in r.pids()]

    def close(self) -> None:
        for runtime in self.all:
            runtime.close()
