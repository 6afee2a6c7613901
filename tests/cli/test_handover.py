"""The hand-over both `migrate` directions share (cli/handover.py), over the memory store: the old set is fenced
before anything is created or deleted, the fence is lifted when the create fails, and "none restarted" is said only
after each pod's uid was checked under the new owner; a pod replaced meanwhile is named, with failure."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from builders import make_set

from rollwise.api.errors import AlreadyExists
from rollwise.api.handover import HANDOVER_ANNOTATION
from rollwise.api.meta import Obj, owner_reference
from rollwise.cli.handover import hand_over
from rollwise.cli.migrate import fields_the_custom_kind_lacks
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET
from rollwise.cluster.store.memory import MemoryCluster


class Kube:
    """The cluster commands' client over a memory store; ``on_list`` runs before each list (the new owner's
    controller, or a fault, acting between the command's polls)."""

    def __init__(self, c: MemoryCluster, on_list: Callable[[], None]) -> None:
        self.c = c
        self.on_list = on_list
        self.writes: list[str] = []

    async def get(self, kind: Any, ns: str, name: str) -> Obj:
        return self.c.get(kind, ns, name)

    async def create(self, obj: Obj) -> Obj:
        self.writes.append(f"create {obj['apiVersion']}")
        return self.c.create(obj)

    async def update_status(self, obj: Obj) -> Obj:
        return self.c.update_status(obj)

    async def patch(self, kind: Any, ns: str, name: str, merge: Mapping[str, Any]) -> Obj:
        self.writes.append(f"patch {name} {merge['metadata'].get('annotations')}")
        return self.c.patch(kind, ns, name, merge)

    async def delete(self, kind: Any, ns: str, name: str, *, uid: str, propagation: str) -> Obj | None:
        self.writes.append(f"delete {name} {propagation}")
        return self.c.delete(kind, ns, name, preconditions={"uid": uid}, propagation=propagation)  # type: ignore[arg-type]

    async def list(self, kind: Any, ns: str) -> tuple[list[Obj], str]:
        self.on_list()
        return self.c.list(kind, ns), ""


def _world(replicas: int = 2) -> tuple[MemoryCluster, Obj, list[Obj]]:
    c = MemoryCluster(clock=lambda: 1.0)
    sts = make_set("web", replicas=replicas, claims=False)
    for key in ("uid", "resourceVersion"):
        del sts["metadata"][key]
    old = c.create(sts)
    pods = [c.create({"apiVersion": "v1", "kind": "Pod", "spec": {}, "metadata": {
        "name": f"web-{i}", "namespace": "default", "labels": {"foo": "bar"},
        "ownerReferences": [owner_reference(old)]}}) for i in range(replicas)]
    return c, old, pods


def _new() -> Obj:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 2}}


def _adopt_orphans(c: MemoryCluster, *, replace: str = "") -> Callable[[], None]:
    """The new owner's controller: adopts the orphans; with ``replace``, that pod is deleted and made again
    first (what the garbage collector and the old controller did in issue 38)."""
    def act() -> None:
        new = c.get(ROLLWISE_STATEFULSET, "default", "web")
        for pod in c.list("Pod", "default"):
            if pod["metadata"].get("ownerReferences"):
                continue
            if pod["metadata"]["name"] == replace:
                c.delete("Pod", "default", replace, grace_period_seconds=0)
                c.create({**pod, "metadata": {k: v for k, v in pod["metadata"].items()
                                              if k in ("name", "namespace", "labels")}})
            c.patch("Pod", "default", pod["metadata"]["name"],
                    {"metadata": {"ownerReferences": [owner_reference(new)]}})
    return act


def _run(kube: Kube, old: Obj, pods: list[Obj]) -> bool:
    return asyncio.run(hand_over(kube, old=old, old_resource=STATEFULSET, old_label="statefulset.apps/web",
                                 new=_new(), new_resource=ROLLWISE_STATEFULSET,
                                 new_label="statefulset.apps.rollwise.dev/web", pods=pods, timeout=5.0,
                                 adopter="the operator"))


def test_the_old_set_is_fenced_before_anything_is_created_or_deleted(capsys: pytest.CaptureFixture[str]) -> None:
    c, old, pods = _world()
    kube = Kube(c, _adopt_orphans(c))
    assert _run(kube, old, pods)
    assert kube.writes[:3] == [f"patch web {{'{HANDOVER_ANNOTATION}': 'statefulset.apps.rollwise.dev/web'}}",
                               "create apps.rollwise.dev/v1alpha1", "delete web Orphan"]
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == "statefulset.apps.rollwise.dev/web adopted 2 pods; none restarted"


def test_a_pod_replaced_during_the_hand_over_is_named_and_it_fails(capsys: pytest.CaptureFixture[str]) -> None:
    c, old, pods = _world()
    assert not _run(Kube(c, _adopt_orphans(c, replace="web-1")), old, pods)
    out, err = capsys.readouterr()
    assert "none restarted" not in out
    assert err.startswith("error: 1 of 2 pods restarted during the hand-over: web-1 (uid ")


def test_the_fence_is_lifted_when_the_new_set_cannot_be_created() -> None:
    c, old, pods = _world()
    c.create(_new())
    with pytest.raises(AlreadyExists):
        _run(Kube(c, lambda: None), old, pods)
    assert HANDOVER_ANNOTATION not in (c.get(STATEFULSET, "default", "web")["metadata"].get("annotations") or {})


def test_an_apps_v1_field_the_custom_kind_lacks_is_named() -> None:
    twin = {**_new(), "spec": {"replicas": 2, "someFutureField": 1, "ordinals": {"start": 1}}}
    assert fields_the_custom_kind_lacks(twin) == [
        "spec.someFutureField: apps.rollwise.dev has no such field; remove it from the set first"]


@pytest.mark.parametrize("direction", ["sts/web", "rsts/web --to apps/v1"])
def test_a_set_being_deleted_is_refused_before_anything_is_written(direction: str) -> None:
    """A set whose deletion a finalizer holds would be handed over half: its pods moved to a new set while the old
    one stays, and the command timed out blaming the garbage collector. It is refused, naming what holds it."""
    from rollwise.cli.handover import HandoverError
    from rollwise.cli.migrate import _migrate
    from rollwise.cli.migrate_back import migrate_back

    c, old, _ = _world()
    resource = STATEFULSET
    if direction != "sts/web":  # the same set as the custom kind
        c = MemoryCluster(clock=lambda: 1.0)
        resource = ROLLWISE_STATEFULSET
        c.create({**{k: v for k, v in old.items() if k != "status"}, "apiVersion": "apps.rollwise.dev/v1alpha1",
                  "metadata": {"name": "web", "namespace": "default"}})
    c.patch(resource, "default", "web", {"metadata": {"finalizers": ["example.com/hold"]}})
    c.delete(resource, "default", "web")
    kube = Kube(c, lambda: None)
    go = _migrate(kube, "default", "web", 5.0) if direction == "sts/web" else \
        migrate_back(kube, "default", "web", None, 5.0)
    with pytest.raises(HandoverError, match=r"is being deleted .*example\.com/hold.*nothing was changed"):
        asyncio.run(go)
    assert kube.writes == []


def test_a_fence_left_on_the_old_set_is_not_copied_to_the_new_one() -> None:
    """A migrate stopped half-way leaves the fence; run again, it copied the set's annotations, fence included,
    so the new set was fenced too: nobody adopted the pods, and the old set was already deleted."""
    from rollwise.cli.migrate import custom_set_for
    from rollwise.cli.migrate_back import apps_v1_set_for

    _, old, _ = _world()
    old["metadata"]["annotations"] = {HANDOVER_ANNOTATION: "statefulset.apps.rollwise.dev/web", "team": "db"}
    assert custom_set_for(old)["metadata"]["annotations"] == {"team": "db"}
    cr = {**custom_set_for(old), "metadata": {**old["metadata"], "annotations": dict(old["metadata"]["annotations"])}}
    assert apps_v1_set_for(cr, None)["metadata"]["annotations"] == {"team": "db"}


def test_one_adopted_pod_is_said_in_the_singular(capsys: pytest.CaptureFixture[str]) -> None:
    c, old, pods = _world(replicas=1)
    assert _run(Kube(c, _adopt_orphans(c)), old, pods)
    assert capsys.readouterr().out.splitlines()[-1] == "statefulset.apps.rollwise.dev/web adopted 1 pod; none restarted"
