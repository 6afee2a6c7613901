"""The one kubelet drive loop (kubelet/loop.py), over a store and a plain clock: what every driver relies on."""

from __future__ import annotations

from typing import Any

import pytest
from step_clock import StepClock

from rollwise.api.errors import Conflict
from rollwise.api.meta import Obj
from rollwise.api.predicates import is_ready
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.kubelet.agent import Note
from rollwise.kubelet.loop import KUBELET, Kubelet
from rollwise.kubelet.profiles import KubeletProfile

PROFILE = KubeletProfile(start_seconds=5, ready_seconds=2, termination_seconds=3)


class World:
    """A store, a clock and the kubelet, with the store's changes fed to the kubelet after each timer."""

    def __init__(self, **hooks: Any) -> None:
        self.clock = StepClock()
        self.cluster = MemoryCluster(clock=self.clock.now)
        self.kubelet = Kubelet(self.cluster, self.clock, PROFILE, **hooks)
        self._cursor = 0

    def feed(self) -> None:
        changes, self._cursor = self.cluster.changes_since(self._cursor)
        for ch in changes:
            if ch.kind == "Pod":
                self.kubelet.pod_changed(ch)

    def create_pod(self, name: str = "web-0") -> Obj:
        pod = self.cluster.create({"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"name": name, "namespace": "default"},
                                   "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}, actor="user")
        self.feed()
        return pod

    def run_until(self, end: float) -> None:
        self.clock.run_until(end, self.feed)

    def pod(self, name: str = "web-0") -> Obj:
        return self.cluster.get("Pod", "default", name)


def test_a_created_pod_is_started_and_made_ready_at_the_profiles_times_with_one_timer_at_a_time() -> None:
    world = World()
    world.create_pod()
    world.run_until(4.9)
    assert world.pod()["status"]["phase"] == "Pending"
    assert world.clock.live() == [5.0], "one wake-up pending, at the start"
    world.run_until(6.9)
    assert world.pod()["status"]["phase"] == "Running" and not is_ready(world.pod())
    world.run_until(7.0)
    assert is_ready(world.pod())
    assert world.clock.live() == [], "a Ready pod asks for no wake-up"


def test_a_deleted_pod_is_removed_after_its_termination_and_leaves_no_record_or_timer() -> None:
    world = World()
    world.create_pod()
    world.run_until(10.0)
    world.cluster.delete("Pod", "default", "web-0", actor="user")
    world.feed()
    world.run_until(12.9)
    assert world.pod()["metadata"].get("deletionTimestamp") is not None
    world.run_until(13.0)
    assert world.cluster.list("Pod") == []
    assert world.kubelet.pods == {} and world.clock.live() == []


def test_a_fault_is_applied_by_an_immediate_look_and_the_pod_recovers() -> None:
    world = World()
    world.create_pod()
    world.run_until(10.0)
    world.kubelet.fault(world.pod(), "kill")
    assert not is_ready(world.pod()), "the fault is visible as soon as it is applied"
    world.run_until(200.0)
    pod = world.pod()
    assert is_ready(pod) and pod["status"]["containerStatuses"][0]["restartCount"] == 1


def test_an_application_models_readiness_decides_ready_and_a_poke_applies_a_change_now() -> None:
    ready: dict[str, tuple[bool, float]] = {"app": (False, 0.0)}
    world = World(readiness=lambda pod: ready)
    world.create_pod()
    world.run_until(60.0)
    assert world.pod()["status"]["phase"] == "Running" and not is_ready(world.pod())
    ready["app"] = (True, 60.0)
    world.kubelet.poke(world.pod()["metadata"]["uid"])
    world.run_until(60.0)
    assert is_ready(world.pod())


def test_notes_and_after_tick_hooks_see_every_look() -> None:
    seen: list[tuple[str, tuple[Note, ...]]] = []
    looks: list[float] = []
    world = World(notes=lambda pod, notes: seen.append((pod["metadata"]["name"], notes)),
                  after_tick=lambda: looks.append(world.clock.now()))
    world.create_pod()
    world.run_until(10.0)
    assert looks == [0.0, 5.0, 7.0]
    assert {note.type for _, notes in seen for note in notes} >= {"PodRunning"}


def test_a_refused_write_is_looked_at_again_after_the_retry_delay() -> None:
    world = World(retry_seconds=0.5)
    world.cluster.inject("update_status", "Pod", Conflict("the object has been modified"), times=1)
    world.create_pod()
    world.run_until(0.0)
    assert world.cluster.write_count(KUBELET) == 0 and world.clock.live() == [0.5]
    world.run_until(0.5)
    assert world.cluster.write_count(KUBELET) == 1 and world.pod()["status"]["containerStatuses"]


def test_without_a_retry_delay_a_refused_write_is_raised() -> None:
    world = World()
    world.cluster.inject("update_status", "Pod", Conflict("the object has been modified"), times=1)
    world.create_pod()
    with pytest.raises(Conflict):
        world.run_until(0.0)


def test_the_kubelets_own_writes_do_not_wake_it_and_a_stopped_kubelet_looks_no_more() -> None:
    world = World()
    world.create_pod()
    world.run_until(0.0)
    writes = world.cluster.write_count(KUBELET)
    assert writes == 1 and world.clock.live() == [5.0], "its own status write asked for no second look"
    world.kubelet.stop()
    world.run_until(100.0)
    assert world.cluster.write_count(KUBELET) == writes and world.clock.live() == []
