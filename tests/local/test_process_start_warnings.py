"""A member process that cannot start is warned about once per pod and reason, not on every kubelet tick: the
kubelet loop retries every tick (50 ms), and a data directory the ``postgres`` user cannot enter
(kubelet/process/patroni.py) stays so until someone fixes it."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from rollwise.cluster.store.memory import MemoryCluster
from rollwise.kubelet.process.runtime import PodSync
from rollwise.local.processes import ProcessKubelet


class _Runtime:
    """The runtime's interface as ProcessKubelet calls it; ``sync`` fails with ``reason`` while it is set."""

    def __init__(self) -> None:
        self.clock: Any = None
        self.reason: str | None = "/srv (mode drwx------) cannot be entered by the user 'postgres'"

    def matches(self, pod: Any) -> bool:
        return True

    def sync(self, pod: Any, sts: Any, now: float) -> PodSync:
        if self.reason is not None:
            raise ValueError(self.reason)
        return PodSync(status=None)

    def member_leases(self) -> list[Any]:
        return []

    def pod_removed(self, pod: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "rollwise.processes" and r.levelno == logging.WARNING]


def test_a_member_that_cannot_start_is_warned_about_once_per_pod_and_reason(
        caplog: pytest.LogCaptureFixture) -> None:
    cluster = MemoryCluster(clock=lambda: 0.0)
    runtime = _Runtime()
    kubelet = ProcessKubelet(runtime, cluster, pump=lambda: None, clock=lambda: 0.0)  # type: ignore[arg-type]
    sts = cluster.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {
        "name": "pg", "namespace": "default"}, "spec": {
        "replicas": 1, "serviceName": "pg", "selector": {"matchLabels": {"app": "pg"}},
        "template": {"metadata": {"labels": {"app": "pg"}},
                     "spec": {"containers": [{"name": "pg", "image": "patroni:4"}]}}}}, actor="user")
    ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "pg", "uid": sts["metadata"]["uid"],
           "controller": True}
    for ordinal in (0, 1):
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": f"pg-{ordinal}", "namespace": "default", "ownerReferences": [ref]},
            "spec": {"containers": [{"name": "pg", "image": "patroni:4"}]}}, actor="statefulset-controller")
    for ch in cluster.changes_since(0)[0]:
        kubelet.on_change(ch)

    with caplog.at_level(logging.DEBUG, logger="rollwise.processes"):
        for _ in range(20):
            kubelet._tick()
        assert sorted(_warnings(caplog)) == [f"pod default/pg-{i}: {runtime.reason}" for i in (0, 1)]

        caplog.clear()
        runtime.reason = "/srv (mode drwx--x---) cannot be entered by the user 'postgres'"
        for _ in range(20):
            kubelet._tick()
        assert sorted(_warnings(caplog)) == [f"pod default/pg-{i}: {runtime.reason}" for i in (0, 1)]

        caplog.clear()
        runtime.reason = None  # fixed: the processes start
        kubelet._tick()
        runtime.reason = "/srv (mode drwx--x---) cannot be entered by the user 'postgres'"  # broken again later
        for _ in range(20):
            kubelet._tick()
        assert sorted(_warnings(caplog)) == [f"pod default/pg-{i}: {runtime.reason}" for i in (0, 1)]
