"""The leader's adoption sweep (`cli/adoption.py`): which set changes call for a sweep, and one list per namespace
for every set due in a round."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from rollwise.api.handover import HANDOVER_ANNOTATION
from rollwise.cli.adoption import sweep_forever


@dataclass
class Delta:
    new: dict[str, Any] | None
    old: dict[str, Any] | None


class Store:
    def __init__(self) -> None:
        self.sets: dict[tuple[str, str], dict[str, Any]] = {}

    def get(self, ns: str, name: str) -> dict[str, Any] | None:
        return self.sets.get((ns, name))

    def list(self) -> list[dict[str, Any]]:
        return list(self.sets.values())


class Informer:
    def __init__(self) -> None:
        self.store = Store()
        self.handlers: list[Any] = []

    def add_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def change(self, new: dict[str, Any]) -> None:
        key = (new["metadata"]["namespace"], new["metadata"]["name"])
        old = self.store.sets.get(key)
        self.store.sets[key] = new
        for handler in self.handlers:
            handler(Delta(new, old))


class Op:
    def __init__(self) -> None:
        self.set_informers = {"statefulset": Informer()}

    def is_leader(self) -> bool:
        return True


class Kube:
    def __init__(self) -> None:
        self.lists: list[tuple[str, str]] = []

    async def list(self, kind: str, namespace: str, *, labels: dict[str, Any]) -> tuple[list[Any], str]:
        self.lists.append((kind, namespace))
        return [], "1"

    async def patch(self, kind: str, namespace: str, name: str, merge: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("nothing to label")


def _set(ns: str, name: str, image: str = "a", app: str = "") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "uid": f"u-{ns}-{name}"},
            "spec": {"selector": {"matchLabels": {"app": app or name}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}}],
                     "template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}


def test_new_sets_are_swept_a_namespace_at_a_time_and_a_rollout_sweeps_nothing() -> None:
    async def go() -> list[list[tuple[str, str]]]:
        op, kube = Op(), Kube()
        informer = op.set_informers["statefulset"]
        task = asyncio.create_task(sweep_forever(op, kube))
        await asyncio.sleep(0)
        rounds = []
        for i in range(30):
            informer.change(_set("a" if i % 3 else "b", f"s{i}"))
        await asyncio.sleep(0.01)
        rounds.append(kube.lists[:])
        kube.lists.clear()
        for i in range(30):  # a new image: which pods are whose does not change
            informer.change(_set("a" if i % 3 else "b", f"s{i}", image="b"))
        await asyncio.sleep(0.01)
        rounds.append(kube.lists[:])
        informer.change(_set("b", "s0", image="b", app="other"))  # a new selector: swept again
        await asyncio.sleep(0.01)
        rounds.append(kube.lists[:])
        task.cancel()
        return rounds

    created, rolled, reselected = asyncio.run(go())
    assert sorted(created) == [("PersistentVolumeClaim", "a"), ("PersistentVolumeClaim", "b"), ("Pod", "a"),
                               ("Pod", "b")]
    assert rolled == []
    assert reselected == [("Pod", "b"), ("PersistentVolumeClaim", "b")]


def test_a_set_being_handed_over_or_deleted_is_not_swept() -> None:
    """Its controller leaves its pods alone (api/handover.py): labelling them for it would undo `migrate --to
    apps/v1`'s unlabelling, on a cache that has not yet seen the set go."""
    async def go() -> list[tuple[str, str]]:
        op, kube = Op(), Kube()
        informer = op.set_informers["statefulset"]
        task = asyncio.create_task(sweep_forever(op, kube))
        await asyncio.sleep(0)
        fenced = _set("a", "web")
        fenced["metadata"]["annotations"] = {HANDOVER_ANNOTATION: "statefulset.apps/web"}
        deleting = _set("a", "db")
        deleting["metadata"]["deletionTimestamp"] = 1.0
        informer.change(fenced)
        informer.change(deleting)
        await asyncio.sleep(0.01)
        informer.change(_set("a", "other"))  # the sweep is alive: this one is swept
        await asyncio.sleep(0.01)
        task.cancel()
        return kube.lists

    assert asyncio.run(go()) == [("Pod", "a"), ("PersistentVolumeClaim", "a")]
