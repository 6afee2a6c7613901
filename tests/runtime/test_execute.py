"""Plan execution: upstream's events and error handling, and the quorum-aware role re-check; the sync and the
async driver carry out one executor alike."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from rollwise.api.errors import Forbidden, InternalError
from rollwise.api.meta import Obj
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.plan import CreatePod, DeletePod, EmitEvent, Plan, ResizeClaim, WriteStatus
from rollwise.runtime.execute import execute, execute_async


def _cluster() -> MemoryCluster:
    c = MemoryCluster(clock=lambda: 0.0)
    c.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "etcd"}, "spec": {}})
    c.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd-1"}, "spec": {}})
    return c


def _lease(c: MemoryCluster, holder: str) -> None:
    c.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "etcd-1"},
              "spec": {"holderIdentity": holder}})


def _delete() -> DeletePod:
    return DeletePod(name="etcd-1", namespace="default", uid="", revision="r1", unless_leader="etcd-1",
                     reason="step 4")


def test_a_follower_delete_is_skipped_when_the_lease_now_names_the_leader() -> None:
    c = _cluster()
    _lease(c, "aaaa:bbbb:Leader")
    sts = c.get("StatefulSet", "default", "etcd")
    out = execute(Plan(actions=(_delete(),)), c, sts=sts, actor="quorum-aware-controller")
    assert c.get("Pod", "default", "etcd-1")["metadata"].get("deletionTimestamp") is None
    assert [e.reason for e in out.events] == ["QuorumAwareDeleteSkipped"]


def test_a_follower_delete_goes_ahead_when_the_lease_still_says_member() -> None:
    c = _cluster()
    _lease(c, "aaaa:bbbb:Member")
    sts = c.get("StatefulSet", "default", "etcd")
    out = execute(Plan(actions=(_delete(),)), c, sts=sts, actor="quorum-aware-controller")
    assert c.get("Pod", "default", "etcd-1")["metadata"]["deletionTimestamp"] == 0.0
    assert [e.reason for e in out.events] == ["SuccessfulDelete"]


def test_a_failed_create_stops_later_pod_writes_but_the_status_is_still_written() -> None:
    c = _cluster()
    c.inject("create", "Pod", InternalError("quota"))
    sts = c.get("StatefulSet", "default", "etcd")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd-0"}, "spec": {}}
    plan = Plan(actions=(CreatePod(pod=pod, ordinal=0, revision="r"), DeletePod(
        name="etcd-1", namespace="default", uid="", revision="r"), WriteStatus(status={"replicas": 1})))
    out = execute(plan, c, sts=sts, actor="statefulset-controller")
    assert isinstance(out.error, InternalError)
    assert [e.reason for e in out.events] == ["FailedCreate"]
    assert "failed error: quota" in out.events[0].message
    assert c.get("Pod", "default", "etcd-1")["metadata"].get("deletionTimestamp") is None
    assert c.get("StatefulSet", "default", "etcd")["status"] == {"replicas": 1}


class _Async:
    """The store's verbs as coroutines, each one a turn of the loop, as the operator's API client's are."""

    def __init__(self, cluster: MemoryCluster, *, stop_after: int | None = None) -> None:
        self.cluster = cluster
        self.calls: list[str] = []
        self.stop_after = stop_after

    def __getattr__(self, verb: str) -> Any:
        async def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(verb)
            await asyncio.sleep(0)
            if self.stop_after is not None and len(self.calls) > self.stop_after:
                await asyncio.sleep(3600)  # parked here until cancelled
            return getattr(self.cluster, verb)(*args, **kwargs)
        return call


def _mixed() -> tuple[MemoryCluster, Plan]:
    """A store and a plan that crosses every kind of outcome: an ignored NotFound, a skipped follower delete, a
    refused resize (noted on the claim) that stops the pod writes after it, the status still written, a plain
    event."""
    c = _cluster()
    _lease(c, "aaaa:bbbb:Leader")
    c.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-etcd-1"},
              "spec": {"resources": {"requests": {"storage": "1Gi"}}}})
    c.inject("patch", "PersistentVolumeClaim", Forbidden("no expansion"))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd-0"}, "spec": {}}
    plan = Plan(actions=(
        DeletePod(name="etcd-9", namespace="default", uid="", revision="r"),
        _delete(),
        ResizeClaim(name="data-etcd-1", namespace="default", storage="2Gi"),
        CreatePod(pod=pod, ordinal=0, revision="r"),
        DeletePod(name="etcd-1", namespace="default", uid="", revision="r"),
        WriteStatus(status={"replicas": 1}),
        EmitEvent(event_reason="Note", message="after"),
    ))
    return c, plan


def _state(c: MemoryCluster) -> list[Obj]:
    return [copy.deepcopy(o) for kind in ("Pod", "PersistentVolumeClaim", "StatefulSet")
            for o in c.list(kind, "default")]


def test_the_async_driver_makes_the_same_calls_with_the_same_outcome_as_the_sync_one() -> None:
    sync_cluster, plan = _mixed()
    sts = sync_cluster.get("StatefulSet", "default", "etcd")
    emitted: list[str] = []
    sync = execute(plan, sync_cluster, sts=sts, actor="statefulset-controller",
                   emit=lambda e: emitted.append(e.reason))
    async_cluster, plan = _mixed()
    api = _Async(async_cluster)
    out = asyncio.run(execute_async(plan, api, sts=async_cluster.get("StatefulSet", "default", "etcd"),
                                    actor="statefulset-controller"))
    assert out.events == sync.events and out.writes == sync.writes
    assert [e.reason for e in out.events] == emitted == ["QuorumAwareDeleteSkipped", "FailedResize", "Note"]
    assert type(out.error) is type(sync.error) is Forbidden
    assert api.calls == ["delete", "get", "patch", "patch", "update_status"]
    assert _state(async_cluster) == _state(sync_cluster)
    claim = async_cluster.get("PersistentVolumeClaim", "default", "data-etcd-1")
    assert "no expansion" in claim["metadata"]["annotations"]["rollwise.dev/resize-refused"]


def test_an_error_that_is_no_api_status_leaves_both_drivers_unhandled() -> None:
    c = _cluster()
    sts = c.get("StatefulSet", "default", "etcd")

    class Broken(_Async):
        def __getattr__(self, verb: str) -> Any:
            async def call(*args: Any, **kwargs: Any) -> Any:
                raise RuntimeError("a bug")
            return call

    with pytest.raises(RuntimeError, match="a bug"):
        asyncio.run(execute_async(Plan(actions=(WriteStatus(status={}),)), Broken(c), sts=sts, actor="a"))
    c.inject("update_status", "StatefulSet", RuntimeError("a bug"))  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="a bug"):
        execute(Plan(actions=(WriteStatus(status={}),)), c, sts=sts, actor="a")


def test_a_cancelled_async_execution_makes_no_further_calls() -> None:
    c = _cluster()
    sts = c.get("StatefulSet", "default", "etcd")
    api = _Async(c, stop_after=1)
    plan = Plan(actions=(DeletePod(name="etcd-1", namespace="default", uid="", revision="r"),
                         WriteStatus(status={"replicas": 0})))

    async def go() -> None:
        task = asyncio.create_task(execute_async(plan, api, sts=sts, actor="a"))
        while len(api.calls) < 2:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert api.calls == ["delete", "update_status"]
    assert c.get("StatefulSet", "default", "etcd").get("status") in (None, {})
