"""Plan execution: upstream's events and error handling, and the quorum-aware role re-check."""

from __future__ import annotations

from rollwise.api.errors import InternalError
from rollwise.cluster.memory import MemoryCluster
from rollwise.controllers.plan import CreatePod, DeletePod, Plan, WriteStatus
from rollwise.runtime.execute import execute


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
