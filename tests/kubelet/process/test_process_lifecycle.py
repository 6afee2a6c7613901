"""The process runtime's container lifecycle on real (non-etcd) processes: start, graceful stop, faults, claims.

A stand-in executable that ignores etcd's flags and sleeps keeps these tests fast and independent of etcd; its
readiness probe fails (nothing answers on the member's port), which is what a member without quorum looks like.
Every process is stopped by pid in the fixture's teardown. Waits are deadline polls on the process's real state.
"""

from __future__ import annotations

import os
import signal
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rollwise.kubelet.process import ProbeSettings, ProcessRuntime
from rollwise.kubelet.profiles import KubeletProfile

FAST = KubeletProfile(crash_backoff_seconds=0.2, crash_backoff_max_seconds=0.4, crash_run_seconds=0.3)
PROBE = ProbeSettings(initial_delay_seconds=0.0, period_seconds=0.2, timeout_seconds=0.1, failure_threshold=1)


def _stand_in(tmp: Path, *, ignore_term: bool = False) -> str:
    path = tmp / ("stubborn" if ignore_term else "member")
    trap = "trap '' TERM\n" if ignore_term else ""
    path.write_text(f"#!/bin/sh\n{trap}echo started\nwhile true; do sleep 0.05; done\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def make_runtime(tmp_path: Path) -> Iterator[Callable[..., ProcessRuntime]]:
    made: list[ProcessRuntime] = []

    def make(*, ignore_term: bool = False, start_seconds: float = 0.0) -> ProcessRuntime:
        rt = ProcessRuntime(tmp_path / f"rt{len(made)}", binary=_stand_in(tmp_path, ignore_term=ignore_term),
                            probe=PROBE, profile=FAST, start_seconds=start_seconds)
        made.append(rt)
        return rt

    yield make
    for rt in made:
        pids = rt.supervisor.pids()
        rt.close()
        for pid in pids:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


STS = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "etcd", "namespace": "default",
                                                                    "uid": "set-uid"},
       "spec": {"replicas": 3, "serviceName": "etcd-peer"}}


def _pod(ordinal: int = 0, *, uid: str = "u0", claim: str | None = "data-etcd-0", image: str = "etcd:3.5.1") -> dict:
    pod: dict = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"etcd-{ordinal}", "namespace": "default", "uid": uid, "creationTimestamp": None,
                     "ownerReferences": [{"kind": "StatefulSet", "name": "etcd", "uid": "set-uid",
                                          "controller": True}]},
        "spec": {"containers": [{"name": "etcd", "image": image}], "terminationGracePeriodSeconds": 30},
    }
    if claim:
        pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return pod


def _until(rt: ProcessRuntime, pod: dict, check: Callable[[dict], bool], *, timeout: float = 10.0) -> dict:
    """Sync until the status (or removal) satisfies ``check``; the pod object carries the last status written."""
    deadline = time.monotonic() + timeout
    while True:
        result = rt.sync(pod, STS, time.monotonic())
        if result.status is not None:
            pod["status"] = result.status
        view = {"remove": result.remove, **(pod.get("status") or {})}
        if check(view):
            return view
        assert time.monotonic() < deadline, f"timed out; last status {pod.get('status')}"


def _state(view: dict) -> dict:
    return view["containerStatuses"][0]["state"]


def _running(view: dict) -> bool:
    return "running" in _state(view)


def test_only_pods_whose_image_matches_the_pattern_run_here(make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    assert rt.matches(_pod()) and not rt.matches(_pod(image="nginx:1.27"))
    assert not rt.matches(_pod(image="quay.io/coreos/etcd:v3.5.1"))  # the pattern is a glob on the whole image


def test_a_pod_waits_in_container_creating_then_runs_unready_while_no_quorum_answers(
        make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime(start_seconds=0.3)
    pod = _pod()
    first = _until(rt, pod, lambda v: "containerStatuses" in v)
    assert _state(first) == {"waiting": {"reason": "ContainerCreating"}} and first["phase"] == "Pending"
    view = _until(rt, pod, _running)
    assert view["phase"] == "Running" and view["containerStatuses"][0]["ready"] is False
    assert len(rt.supervisor.pids()) == 1


def test_graceful_deletion_sends_sigterm_and_the_pod_goes_once_the_process_exits(
        make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    pod = _pod()
    _until(rt, pod, _running)
    [pid] = rt.supervisor.pids()
    pod["metadata"].update(deletionTimestamp=time.monotonic(), deletionGracePeriodSeconds=30)
    gone = _until(rt, pod, lambda v: v["remove"])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    # Written with the removal: the exit SIGTERM caused, not Ready, and the terminal phase that follows from it.
    exited = _state(gone)["terminated"]["exitCode"]
    assert gone["phase"] == ("Succeeded" if exited == 0 else "Failed")
    assert [c["status"] for c in gone["conditions"] if c["type"] == "Ready"] == ["False"]


def test_a_process_that_ignores_sigterm_is_killed_when_the_grace_period_ends(
        make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime(ignore_term=True)
    pod = _pod()
    _until(rt, pod, _running)
    log = rt.root / "logs" / "etcd-0.log"
    deadline = time.monotonic() + 10
    while "started" not in (log.read_text() if log.exists() else ""):  # the trap is set before the echo
        assert time.monotonic() < deadline
    [pid] = rt.supervisor.pids()
    pod["metadata"].update(deletionTimestamp=time.monotonic(), deletionGracePeriodSeconds=0.5)
    rt.sync(pod, STS, time.monotonic())
    assert rt.supervisor.exit_code(pid) is None  # SIGTERM alone did not stop it
    gone = _until(rt, pod, lambda v: v["remove"])
    assert rt.supervisor.pids() == []
    assert (_state(gone)["terminated"]["exitCode"], gone["phase"]) == (128 + signal.SIGKILL, "Failed")


def test_crash_kills_the_member_and_every_restart_crashes_again(make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    pod = _pod()
    _until(rt, pod, _running)
    rt.fault(pod, "crash", time.monotonic())
    view = _until(rt, pod, lambda v: _state(v).get("waiting", {}).get("reason") == "CrashLoopBackOff")
    last = view["containerStatuses"][0]["lastState"]["terminated"]
    assert last["exitCode"] == 128 + signal.SIGKILL
    _until(rt, pod, lambda v: _running(v) and v["containerStatuses"][0]["restartCount"] == 1)
    again = _until(rt, pod, lambda v: v["containerStatuses"][0]["restartCount"] == 1 and not _running(v))
    assert _state(again)["waiting"]["reason"] == "CrashLoopBackOff"


def test_kill_restarts_the_member_once_and_it_keeps_running(make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    pod = _pod()
    _until(rt, pod, _running)
    [first] = rt.supervisor.pids()
    rt.fault(pod, "kill", time.monotonic())
    view = _until(rt, pod, lambda v: _running(v) and v["containerStatuses"][0]["restartCount"] == 1)
    assert view["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 137
    assert rt.supervisor.pids() != [first] and len(rt.supervisor.pids()) == 1


def test_fail_stops_the_member_for_good_and_the_pod_turns_failed(make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    pod = _pod()
    _until(rt, pod, _running)
    rt.fault(pod, "fail", time.monotonic())
    view = _until(rt, pod, lambda v: v["phase"] == "Failed")
    assert "terminated" in _state(view)
    assert rt.supervisor.pids() == []


def test_unknown_faults_and_pods_not_started_here_are_refused(make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    pod = _pod()
    with pytest.raises(KeyError, match="etcd-0"):
        rt.fault(pod, "crash", 0.0)
    _until(rt, pod, _running)
    with pytest.raises(ValueError, match="unknown pod fault"):
        rt.fault(pod, "explode", 0.0)


def test_the_claim_s_data_outlives_its_pod_and_goes_only_with_the_claim(
        make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    pod = _pod()
    _until(rt, pod, _running)
    data = rt.data_dir("default", "data-etcd-0")
    (data / "etcd").mkdir(parents=True, exist_ok=True)
    (data / "etcd" / "wal").write_text("member data")
    rt.claim_deleted("default", "data-etcd-0")
    assert (data / "etcd" / "wal").exists()  # in use: kept until the process stops (PVC protection)
    pod["metadata"].update(deletionTimestamp=time.monotonic(), deletionGracePeriodSeconds=30)
    _until(rt, pod, lambda v: v["remove"])
    rt.pod_removed(pod)
    assert not data.exists()


def test_a_recreated_pod_finds_its_claim_s_data_again(make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    pod = _pod(uid="first")
    _until(rt, pod, _running)
    marker = rt.data_dir("default", "data-etcd-0") / "etcd-data"
    marker.write_text("kept")
    pod["metadata"].update(deletionTimestamp=time.monotonic(), deletionGracePeriodSeconds=30)
    _until(rt, pod, lambda v: v["remove"])
    rt.pod_removed(pod)
    again = _pod(uid="second")
    _until(rt, again, _running)
    assert marker.read_text() == "kept"


def test_a_pod_without_a_claim_loses_its_directory_with_the_pod(make_runtime: Callable[..., ProcessRuntime]) -> None:
    rt = make_runtime()
    pod = _pod(claim=None)
    _until(rt, pod, _running)
    own = rt.root / "pods" / "u0"
    assert own.is_dir()
    pod["metadata"].update(deletionTimestamp=time.monotonic(), deletionGracePeriodSeconds=30)
    _until(rt, pod, lambda v: v["remove"])
    rt.pod_removed(pod)
    assert not own.exists()
