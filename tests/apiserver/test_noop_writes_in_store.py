"""Every update path of `up`'s store skips a write that changes nothing: PUT, the status and scale subresources,
the four patch types and server-side apply keep the resourceVersion, the generation and the managedFields times,
and send no watch event, with the clock moved on between the writes (kube-apiserver's ``GuaranteedUpdate`` in
k8s.io/apiserver/pkg/storage/etcd3/store.go; an apply that changes nothing keeps its managedFields time, as
``managedFieldsUpdater.Apply`` in k8s.io/apimachinery/pkg/util/managedfields/internal does)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from rollwise.api.meta import Obj
from rollwise.api.values import clone
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.storage.store import ApiStore

STS = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "nginx:1.27", ports: [{containerPort: 80, name: http}]}]}
"""
APPLY = "application/apply-patch+yaml"


class Clock:
    now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def world() -> Iterator[tuple[ApiStore, Resource, Clock]]:
    clock = Clock()
    store = ApiStore(clock=clock)
    sets = store.registry.find("apps", "v1", "statefulsets")
    assert sets is not None
    store.patch(sets, "default", "web", APPLY, yaml.safe_load(STS), actor="admin", manager="kubectl")
    stored = store.get(sets, "default", "web")
    store.update(sets, "default", "web", {**clone(stored), "status": {"replicas": 3, "availableReplicas": 3}},
                 actor="admin", subresource="status", manager="controller")
    clock.now += 60  # every managedFields time a write stamped would now differ
    try:
        yield store, sets, clock
    finally:
        store.close()


def _current(store: ApiStore, sets: Resource) -> Obj:
    return clone(store.get(sets, "default", "web"))


SAME: dict[str, Callable[[ApiStore, Resource], Any]] = {
    "put": lambda s, r: s.update(r, "default", "web", _current(s, r), actor="admin", manager="kubectl"),
    "put status": lambda s, r: s.update(r, "default", "web", _current(s, r), actor="admin", subresource="status",
                                        manager="controller"),
    "scale": lambda s, r: s.update_scale(r, "default", "web", {"spec": {"replicas": 3}}, actor="admin"),
    "merge patch": lambda s, r: s.patch(r, "default", "web", "application/merge-patch+json",
                                        {"spec": {"replicas": 3}}, actor="admin", manager="kubectl"),
    "strategic patch": lambda s, r: s.patch(r, "default", "web", "application/strategic-merge-patch+json",
                                            {"metadata": {"labels": {"app": "web"}}}, actor="admin",
                                            manager="kubectl"),
    "json patch": lambda s, r: s.patch(r, "default", "web", "application/json-patch+json",
                                       [{"op": "replace", "path": "/spec/replicas", "value": 3}], actor="admin",
                                       manager="kubectl"),
    "status patch": lambda s, r: s.patch(r, "default", "web", "application/merge-patch+json",
                                         {"status": {"replicas": 3}}, actor="admin", subresource="status",
                                         manager="controller"),
    "server-side apply": lambda s, r: s.patch(r, "default", "web", APPLY, yaml.safe_load(STS), actor="admin",
                                              manager="kubectl"),
}


@pytest.mark.parametrize("verb", list(SAME))
def test_an_update_path_that_changes_nothing_keeps_version_generation_and_managed_fields(
        world: tuple[ApiStore, Resource, Clock], verb: str) -> None:
    store, sets, _ = world
    before = store.get(sets, "default", "web")
    rv = store.resource_version
    watch = store.cluster.watch(sets.key, since=rv)
    SAME[verb](store, sets)
    assert store.get(sets, "default", "web") is before
    assert store.resource_version == rv
    assert watch.drain() == []


def test_a_real_change_by_apply_still_writes_and_stamps_the_appliers_time(
        world: tuple[ApiStore, Resource, Clock]) -> None:
    store, sets, _ = world
    rv = store.resource_version
    store.patch(sets, "default", "web", APPLY, yaml.safe_load(STS.replace("replicas: 3", "replicas: 4")),
                actor="admin", manager="kubectl")
    after = store.get(sets, "default", "web")
    assert int(after["metadata"]["resourceVersion"]) > rv
    assert after["metadata"]["generation"] == 2
    mine = next(e for e in after["metadata"]["managedFields"] if e["manager"] == "kubectl")
    assert mine["time"] == "2027-01-15T08:01:00Z"
