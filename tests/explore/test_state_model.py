"""The canonical state: what decides is kept, what cannot (uids, resourceVersions, timestamps) is forgotten."""

from __future__ import annotations

import pytest
from explore_sets import STRATEGIES, manifest

from rollwise.api.features import FeatureGates
from rollwise.api.predicates import is_available, is_running_and_ready
from rollwise.explore import Bounds, initial_node
from rollwise.explore.controller import controller_moves
from rollwise.explore.pods import NOW, stage_of, status_for
from rollwise.invariants.stages import AVAILABLE, READY, STAGES

POD = {"metadata": {"name": "web-0"}, "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_reads_back_from_the_status_it_writes(stage: str) -> None:
    pod = {**POD, "status": status_for(POD, stage, min_ready_seconds=10)}
    assert stage_of(pod, 10) == stage


def test_ready_is_not_available_until_min_ready_seconds_elapse() -> None:
    ready = {**POD, "status": status_for(POD, READY, min_ready_seconds=10)}
    available = {**POD, "status": status_for(POD, AVAILABLE, min_ready_seconds=10)}
    assert is_running_and_ready(ready) and not is_available(ready, 10, NOW)
    assert is_available(available, 10, NOW)


def test_the_same_store_reached_twice_has_one_key() -> None:
    bounds = Bounds(replicas=2)
    start = initial_node(manifest(STRATEGIES["RollingUpdate"][0], "Parallel", replicas=2), gates=FeatureGates(),
                         bounds=bounds)
    (first,) = [t.after for t in controller_moves(start, bounds)]
    (again,) = [t.after for t in controller_moves(start, bounds)]
    assert first.cluster is not again.cluster
    assert first.key == again.key
    assert first.key != start.key


def test_uids_and_resource_versions_do_not_split_states() -> None:
    bounds = Bounds(replicas=2)
    obj = manifest(STRATEGIES["RollingUpdate"][0], "Parallel", replicas=2)
    one = initial_node(obj, gates=FeatureGates(), bounds=bounds)
    other = initial_node(obj, gates=FeatureGates(), bounds=bounds)
    other.cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unrelated"}})
    other.cluster.delete("ConfigMap", "default", "unrelated")  # uids and resourceVersions move on
    (a,) = [t.after for t in controller_moves(one, bounds)]
    (b,) = [t.after for t in controller_moves(other, bounds)]
    uids = {p["metadata"]["uid"] for p in a.pods()} ^ {p["metadata"]["uid"] for p in b.pods()}
    assert uids  # the pods differ in uid (and resourceVersion) ...
    assert a.key == b.key  # ... and are one state
