"""MemoryCluster: the change feed and its cursors, write accounting per actor, and fault injection."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.api.errors import ApiStatusError, Conflict, Gone, InternalError, NotFound
from rollwise.api.meta import Obj
from rollwise.cluster.store.memory import MemoryCluster


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def obj(kind: str, name: str, **fields: Any) -> Obj:
    return {"kind": kind, "metadata": {"name": name, **fields.pop("metadata", {})}, **fields}


@pytest.fixture
def clock() -> Clock:
    return Clock(1.0)


@pytest.fixture
def cluster(clock: Clock) -> MemoryCluster:
    return MemoryCluster(clock=clock)


# -- change feed -------------------------------------------------------------------------------------------------


def test_change_feed_records_every_write_in_order_with_old_new_actor_and_time(
    cluster: MemoryCluster, clock: Clock
) -> None:
    created = cluster.create(obj("Pod", "web-0", spec={}), actor="statefulset-controller")
    clock.now = 2.0
    running = cluster.update_status({**created, "status": {"phase": "Running"}}, actor="kubelet")
    clock.now = 3.0
    terminating = cluster.delete("Pod", "default", "web-0", actor="user")
    clock.now = 4.0
    cluster.delete("Pod", "default", "web-0", grace_period_seconds=0, actor="kubelet")
    changes, cursor = cluster.changes_since(0)
    assert cursor == 4
    assert [(c.type, c.kind, c.namespace, c.name, c.actor, c.at) for c in changes] == [
        ("ADDED", "Pod", "default", "web-0", "statefulset-controller", 1.0),
        ("MODIFIED", "Pod", "default", "web-0", "kubelet", 2.0),
        ("MODIFIED", "Pod", "default", "web-0", "user", 3.0),
        ("DELETED", "Pod", "default", "web-0", "kubelet", 4.0),
    ]
    assert (changes[0].obj, changes[0].old) == (created, None)
    assert (changes[1].obj, changes[1].old) == (running, created)
    assert (changes[2].obj, changes[2].old) == (terminating, running)
    assert changes[3].old is terminating
    assert changes[3].obj["metadata"]["resourceVersion"] == "4"
    assert changes[3].obj["metadata"]["deletionTimestamp"] == 3.0


def test_cursor_returns_only_newer_changes(cluster: MemoryCluster) -> None:
    cluster.create(obj("Lease", "a"))
    first, cursor = cluster.changes_since(0)
    assert [c.name for c in first] == ["a"]
    assert cluster.changes_since(cursor) == ([], cursor)
    cluster.create(obj("Lease", "b"))
    cluster.create(obj("Lease", "c"))
    newer, cursor2 = cluster.changes_since(cursor)
    assert [c.name for c in newer] == ["b", "c"]
    assert cursor2 == cluster.cursor == 3


def test_compact_discards_consumed_changes_and_older_cursors_are_gone(cluster: MemoryCluster) -> None:
    for name in "abcd":
        cluster.create(obj("Lease", name))
    cluster.compact(3)
    assert [c.name for c in cluster.changes_since(3)[0]] == ["d"]
    with pytest.raises(Gone):
        cluster.changes_since(2)
    cluster.compact(1)  # compacting backwards does nothing
    cluster.compact(100)  # nor beyond the end
    assert cluster.changes_since(4) == ([], 4)
    cluster.create(obj("Lease", "e"))
    assert [c.name for c in cluster.changes_since(4)[0]] == ["e"]
    with pytest.raises(ValueError, match="ahead"):
        cluster.changes_since(9)


# -- write accounting --------------------------------------------------------------------------------------------


def test_writes_are_counted_per_actor_excluding_events_failures_and_no_op_deletes(cluster: MemoryCluster) -> None:
    cluster.create(obj("StatefulSet", "web", spec={}), actor="user")
    pod = cluster.create(obj("Pod", "web-0"), actor="ctrl")
    cluster.update_status({**pod, "status": {"phase": "Running"}}, actor="kubelet")
    cluster.patch("Pod", "default", "web-0", {"metadata": {"labels": {"a": "b"}}}, actor="ctrl")
    cluster.update({**pod, "metadata": {"name": "web-0", "labels": {}}}, actor="ctrl")
    cluster.create(obj("Event", "web.1", reason="SuccessfulCreate"), actor="ctrl")
    cluster.delete("Pod", "default", "web-0", actor="ctrl")
    cluster.delete("Pod", "default", "web-0", actor="ctrl")  # no-op: not shorter
    with pytest.raises(Conflict):
        cluster.update(pod, actor="ctrl")
    with pytest.raises(NotFound):
        cluster.delete("Pod", "default", "nope", actor="ctrl")
    assert cluster.writes == {"user": 1, "ctrl": 4, "kubelet": 1}
    assert cluster.write_count("ctrl") == 4
    assert cluster.write_count("nobody") == 0
    assert cluster.write_count() == 6


# -- fault injection ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("after", "times", "failing_calls"),
    [(0, 1, [1]), (2, 1, [3]), (1, 2, [2, 3]), (0, 3, [1, 2, 3])],
    ids=["next-call", "third-call", "two-in-a-row-after-one", "three-in-a-row"],
)
def test_injected_error_hits_the_after_plus_first_call_times_in_a_row(
    cluster: MemoryCluster, after: int, times: int, failing_calls: list[int]
) -> None:
    error = InternalError("injected")
    cluster.inject("create", "Pod", error, after=after, times=times)
    failed = []
    for call in range(1, 6):
        try:
            cluster.create(obj("Pod", f"web-{call}"))
        except InternalError as err:
            assert err is error
            failed.append(call)
    assert failed == failing_calls
    assert len(cluster) == 5 - len(failing_calls)
    assert cluster.write_count() == 5 - len(failing_calls)
    assert len(cluster.changes_since(0)[0]) == 5 - len(failing_calls)


@pytest.mark.parametrize(
    ("verb", "call"),
    [
        ("update", lambda c: c.update(obj("Pod", "web-0", spec={"x": 1}))),
        ("update_status", lambda c: c.update_status(obj("Pod", "web-0", status={"phase": "Running"}))),
        ("patch", lambda c: c.patch("Pod", "default", "web-0", {"spec": {"x": 1}})),
        ("delete", lambda c: c.delete("Pod", "default", "web-0")),
    ],
    ids=["update", "update_status", "patch", "delete"],
)
def test_injected_error_leaves_the_object_unchanged_for_every_verb(
    cluster: MemoryCluster, verb: str, call: Any
) -> None:
    stored = cluster.create(obj("Pod", "web-0", spec={}))
    cluster.inject(verb, "Pod", InternalError("boom"))
    with pytest.raises(InternalError):
        call(cluster)
    assert cluster.get("Pod", "default", "web-0") is stored
    assert cluster.write_count() == 1
    call(cluster)  # the injection is used up
    assert cluster.write_count() == 2


def test_injection_targets_only_its_verb_and_kind(cluster: MemoryCluster) -> None:
    cluster.inject("create", "PersistentVolumeClaim", InternalError("full"))
    cluster.create(obj("Pod", "web-0"))
    cluster.patch("Pod", "default", "web-0", {"metadata": {"labels": {"a": "b"}}})
    with pytest.raises(InternalError):
        cluster.create(obj("PersistentVolumeClaim", "data-web-0"))
    cluster.create(obj("PersistentVolumeClaim", "data-web-0"))


def test_injected_error_can_be_any_api_status_error(cluster: MemoryCluster) -> None:
    cluster.create(obj("Pod", "web-0"))
    cluster.inject("delete", "Pod", Conflict("busy"))
    with pytest.raises(ApiStatusError) as info:
        cluster.delete("Pod", "default", "web-0")
    assert info.value.code == 409


@pytest.mark.parametrize(
    ("verb", "after", "times"),
    [("get", 0, 1), ("create", -1, 1), ("create", 0, 0)],
    ids=["reads-cannot-fail", "negative-after", "zero-times"],
)
def test_inject_refuses_bad_arguments(cluster: MemoryCluster, verb: str, after: int, times: int) -> None:
    with pytest.raises(ValueError):
        cluster.inject(verb, "Pod", InternalError(), after=after, times=times)
