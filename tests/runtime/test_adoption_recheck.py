"""Adoption as upstream's ControllerRefManager: before the first adoption of a round the executor reads the owner
uncached, and adopts nothing for an owner that is gone, replaced, being deleted or handed over, whatever the
controller's (cached) view said; each adoption patch carries the pod's uid and resourceVersion as preconditions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from builders import make_set
from harness import Harness

from rollwise.api.errors import Conflict
from rollwise.api.handover import HANDOVER_ANNOTATION
from rollwise.api.meta import Obj, controller_of
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.plan import Plan, UpdateClaim, WriteStatus
from rollwise.controllers.statefulset.ownership import claim_pods
from rollwise.runtime.execute import execute, execute_async

ORPHAN = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo-0", "namespace": "default",
                                                          "labels": {"foo": "bar"}}, "spec": {}}


def _world() -> tuple[MemoryCluster, Obj, Obj]:
    """A store with the set ``foo`` and an orphan pod it would adopt; the set as a cache holds it now."""
    c = MemoryCluster(clock=lambda: 7.0)
    sts = make_set("foo", claims=False)
    for key in ("uid", "resourceVersion"):
        del sts["metadata"][key]
    cached = c.create(sts)
    pod = c.create(ORPHAN)
    return c, cached, pod


def _adopting_plan(cached: Obj, pod: Obj) -> Plan:
    owned, actions = claim_pods(cached, [pod])
    assert [controller_of(p) is not None for p in owned] == [True] and len(actions) == 1
    return Plan(actions=(*actions, WriteStatus(status={"replicas": 1})))


def _being_orphan_deleted(c: MemoryCluster) -> None:
    c.orphan_later = lambda step: None  # the collector has not come round yet
    c.delete("StatefulSet", "default", "foo", propagation="Orphan")


def _replaced(c: MemoryCluster) -> None:
    fresh = c.get("StatefulSet", "default", "foo")
    c.delete("StatefulSet", "default", "foo")
    c.create({**fresh, "metadata": {"name": "foo", "namespace": "default"}})


def _fenced(c: MemoryCluster) -> None:
    c.patch("StatefulSet", "default", "foo",
            {"metadata": {"annotations": {HANDOVER_ANNOTATION: "statefulset.apps.rollwise.dev/foo"}}})


CHANGES: dict[str, tuple[Callable[[MemoryCluster], None], str]] = {
    "being deleted": (_being_orphan_deleted, "has just been deleted at 7.0"),
    "gone": (lambda c: c.delete("StatefulSet", "default", "foo"), "is gone: got NotFound"),
    "replaced": (_replaced, "is gone: got uid"),
    "handed over": (_fenced, "is being handed over to statefulset.apps.rollwise.dev/foo"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_no_pod_is_adopted_for_an_owner_the_live_read_refuses(change: str) -> None:
    c, cached, pod = _world()
    plan = _adopting_plan(cached, pod)
    make, said = CHANGES[change]
    make(c)
    out = execute(plan, c, sts=cached, actor="statefulset-controller")
    assert isinstance(out.error, Conflict) and said in str(out.error)
    assert "ownerReferences" not in c.get("Pod", "default", "foo-0")["metadata"]
    assert out.writes == 0  # nor the status: the round ends as upstream's sync returns its error


def test_the_operators_executor_reads_the_owner_live_too() -> None:
    c, cached, pod = _world()
    plan = _adopting_plan(cached, pod)
    _being_orphan_deleted(c)

    class Api:
        def __getattr__(self, verb: str) -> Any:
            async def call(*args: Any, **kwargs: Any) -> Any:
                return getattr(c, verb)(*args, **kwargs)
            return call

    out = asyncio.run(execute_async(plan, Api(), sts=cached, actor="statefulset-controller"))
    assert isinstance(out.error, Conflict)
    assert "ownerReferences" not in c.get("Pod", "default", "foo-0")["metadata"]


def test_an_owner_the_live_read_confirms_adopts() -> None:
    c, cached, pod = _world()
    out = execute(_adopting_plan(cached, pod), c, sts=cached, actor="statefulset-controller")
    assert out.error is None
    ref = controller_of(c.get("Pod", "default", "foo-0"))
    assert ref is not None and ref["uid"] == cached["metadata"]["uid"]


def test_a_pod_changed_since_the_controller_saw_it_is_not_adopted() -> None:
    """Another controller took it meanwhile: the adoption's resourceVersion precondition fails, its owner stays."""
    c, cached, pod = _world()
    plan = _adopting_plan(cached, pod)
    other = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "other", "uid": "uid-other", "controller": True}
    c.patch("Pod", "default", "foo-0", {"metadata": {"ownerReferences": [other]}})
    out = execute(plan, c, sts=cached, actor="statefulset-controller")
    assert isinstance(out.error, Conflict)
    assert controller_of(c.get("Pod", "default", "foo-0")) == other



def test_a_claim_is_not_given_back_to_a_set_the_live_read_finds_being_deleted() -> None:
    """whenDeleted: Delete puts the set's reference on its claims; after an Orphan delete stripped it, a stale
    cache must not put it back (the collector would then delete the claim, and its data, with the set)."""
    h = Harness(make_set("foo", replicas=1, retention=("Retain", "Delete")))
    h.settle()
    cached = h.sts
    h.cluster.patch("PersistentVolumeClaim", "default", "datadir-foo-0", {"metadata": {"ownerReferences": None}})
    plan = h.plan()
    (fix,) = plan.of_type(UpdateClaim)
    assert fix.adopt
    _being_orphan_deleted(h.cluster)
    out = execute(plan, h.cluster, sts=cached, actor="statefulset-controller")
    assert isinstance(out.error, Conflict)
    assert not h.cluster.get("PersistentVolumeClaim", "default", "datadir-foo-0")["metadata"].get("ownerReferences")
