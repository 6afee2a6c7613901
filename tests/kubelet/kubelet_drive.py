"""A tiny stand-in for the simulation loop: holds one pod and its runtime, writes what ``advance`` returns."""

from __future__ import annotations

import copy
from typing import Any

from rollwise.kubelet.agent import KubeletStep, PodRuntime, advance, apply_fault
from rollwise.kubelet.profiles import KubeletProfile

__all__ = ["Driver", "condition", "make_pod", "snapshot"]


def make_pod(*images: str, uid: str = "u1", created: float = 0.0, name: str = "web-0") -> dict[str, Any]:
    """A pod with one container per image, named app, side1, side2, ..."""
    names = ["app"] + [f"side{i}" for i in range(1, len(images))]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": uid, "creationTimestamp": created},
        "spec": {"containers": [{"name": n, "image": i} for n, i in zip(names, images or ("app:v1",), strict=False)]},
    }


def condition(status: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in status["conditions"] if c["type"] == kind)


def _state(cs: dict[str, Any]) -> str:
    state = cs["state"]
    if "waiting" in state:
        return state["waiting"]["reason"]
    if "terminated" in state:
        return "terminated:" + state["terminated"]["reason"]
    return "running"


def snapshot(status: dict[str, Any], container: int = 0) -> tuple[str, str, str, int]:
    """(phase, Ready status, container state or waiting reason, restartCount) of one container."""
    cs = status["containerStatuses"][container]
    return status["phase"], condition(status, "Ready")["status"], _state(cs), cs["restartCount"]


class Driver:
    """Calls ``advance`` like the loop does and keeps the pod's status and the runtime between calls."""

    def __init__(self, pod: dict[str, Any], profile: KubeletProfile | None = None) -> None:
        self.pod = copy.deepcopy(pod)
        self.profile = profile or KubeletProfile()
        self.runtime = PodRuntime.initial()
        self.removed = False
        self.steps: list[KubeletStep] = []

    def at(self, now: float) -> KubeletStep:
        step = advance(self.pod, self.runtime, self.profile, now)
        self.runtime = step.runtime
        if step.status is not None:
            self.pod["status"] = step.status
        self.removed = self.removed or step.remove
        self.steps.append(step)
        return step

    def fault(self, fault: str, now: float, container: str | None = None) -> KubeletStep:
        self.runtime = apply_fault(self.pod, self.runtime, fault, now, container=container)
        return self.at(now)

    def delete(self, now: float, *, grace: float | None = None) -> KubeletStep:
        meta = self.pod["metadata"]
        meta["deletionTimestamp"] = now
        if grace is not None:
            meta["deletionGracePeriodSeconds"] = grace
        return self.at(now)

    @property
    def status(self) -> dict[str, Any]:
        return self.pod["status"]

    def snap(self, container: int = 0) -> tuple[str, str, str, int]:
        return snapshot(self.status, container)
