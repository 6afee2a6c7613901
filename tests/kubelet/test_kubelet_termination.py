"""Graceful deletion as the kubelet does it (kubelet/termination.py): the containers stop (preStop, SIGTERM, the
grace period, SIGKILL), the pod turns Succeeded or Failed, and goes at the later of that and + min(terminationSeconds,
grace)."""

from __future__ import annotations

from typing import Any

import pytest
from kubelet_drive import Driver, condition, make_pod

from rollwise.kubelet.agent import removal_time
from rollwise.kubelet.profiles import ImageBehaviour, KubeletProfile

PROFILE = KubeletProfile()  # terminationSeconds 3


def _pod(**grace: Any) -> dict[str, Any]:
    pod = make_pod("app:v1")
    if "spec" in grace:
        pod["spec"]["terminationGracePeriodSeconds"] = grace["spec"]
    return pod


@pytest.mark.parametrize(
    ("spec_grace", "deletion_grace", "removed_at"),
    [
        (None, None, 13.0),  # default grace 30 > terminationSeconds 3
        (60, None, 13.0),  # longer grace: terminationSeconds wins
        (2, None, 12.0),  # spec grace shorter than terminationSeconds
        (30, 1, 11.0),  # the delete call's grace overrides the spec's
        (30, 0, 10.0),  # force deletion: gone at once
    ],
    ids=["default-grace", "longer-grace", "shorter-spec-grace", "delete-call-grace", "grace-zero"],
)
def test_pod_is_removed_at_deletion_plus_the_shorter_of_termination_and_grace(
    spec_grace: int | None, deletion_grace: int | None, removed_at: float
) -> None:
    pod = _pod(spec=spec_grace) if spec_grace is not None else _pod()
    driver = Driver(pod, PROFILE)
    driver.at(7.0)
    step = driver.delete(10.0, grace=deletion_grace)
    assert removal_time(driver.pod, PROFILE) == removed_at
    if removed_at == 10.0:
        assert step.remove
        return
    assert (step.remove, step.wake_at) == (False, removed_at)
    assert not driver.at(removed_at - 0.01).remove
    final = driver.at(removed_at)
    assert (final.remove, final.status, final.wake_at) == (True, None, None)


def _terminated(driver: Driver, container: int = 0) -> dict[str, Any]:
    return driver.status["containerStatuses"][container]["state"]["terminated"]


def test_a_deleted_pod_s_containers_stop_at_once_and_the_pod_succeeds_before_it_goes() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(7.0)
    step = driver.delete(10.0)
    assert driver.snap() == ("Succeeded", "False", "terminated:Completed", 0)
    assert _terminated(driver) == {"exitCode": 0, "reason": "Completed", "startedAt": 5.0, "finishedAt": 10.0}
    assert condition(driver.status, "Ready")["reason"] == "PodCompleted"
    assert condition(driver.status, "Ready")["lastTransitionTime"] == 10.0
    assert condition(driver.status, "ContainersReady")["reason"] == "PodCompleted"
    assert driver.status["containerStatuses"][0]["started"] is False
    assert (step.remove, step.wake_at) == (False, 13.0)
    assert driver.at(12.0).status is None
    assert driver.at(13.0).remove


def test_a_container_that_takes_its_time_to_exit_keeps_its_status_until_it_does() -> None:
    profile = KubeletProfile(stop_seconds=2.0)
    driver = Driver(make_pod("app:v1"), profile)
    driver.at(7.0)
    before = dict(driver.status)
    step = driver.delete(10.0)
    assert (step.status, step.wake_at) == (None, 12.0)
    assert driver.at(11.5).status is None
    assert driver.status == before
    step = driver.at(12.0)
    assert driver.snap() == ("Succeeded", "False", "terminated:Completed", 0)
    assert _terminated(driver)["finishedAt"] == 12.0
    assert (step.remove, step.wake_at) == (False, 13.0)


def test_a_container_still_running_when_the_grace_period_ends_is_killed_and_the_pod_fails() -> None:
    profile = KubeletProfile(images={"slow:v1": ImageBehaviour(stop_seconds=60.0)})
    driver = Driver(make_pod("slow:v1", "app:v1"), profile)
    driver.at(7.0)
    step = driver.delete(10.0)
    # The sidecar exits at once; the pod is not Ready, but not terminal while the slow container still runs.
    assert driver.snap(1) == ("Running", "False", "terminated:Completed", 0)
    assert driver.snap(0)[2] == "running"
    assert step.wake_at == 40.0
    final = driver.at(40.0)
    assert driver.snap(0) == ("Failed", "False", "terminated:Error", 0)
    assert _terminated(driver, 0)["exitCode"] == 137
    assert condition(driver.status, "Ready")["reason"] == "PodFailed"
    assert (final.remove, final.status is not None) == (True, True)


def test_a_pre_stop_sleep_delays_sigterm_and_leaves_at_least_two_seconds_before_the_kill() -> None:
    pod = make_pod("app:v1", "slow:v1")
    for c in pod["spec"]["containers"]:
        c["lifecycle"] = {"preStop": {"sleep": {"seconds": 5}}}
    pod["spec"]["terminationGracePeriodSeconds"] = 6
    profile = KubeletProfile(stop_seconds=1.0, images={"slow:v1": ImageBehaviour(stop_seconds=60.0)})
    driver = Driver(pod, profile)
    driver.at(7.0)
    driver.delete(10.0)
    driver.at(16.0)
    assert _terminated(driver, 0)["finishedAt"] == 16.0  # hook 5 s, then it exits 1 s after SIGTERM
    assert driver.snap(1)[2] == "running"
    step = driver.at(17.0)  # 6 s of grace minus the 5 s hook leaves 1 s: raised to the kubelet's minimum of 2
    assert (_terminated(driver, 1)["exitCode"], _terminated(driver, 1)["finishedAt"]) == (137, 17.0)
    assert step.remove


def test_a_shorter_repeated_delete_kills_sooner_and_the_kubelet_s_own_delete_changes_nothing() -> None:
    profile = KubeletProfile(stop_seconds=60.0)
    driver = Driver(make_pod("app:v1"), profile)
    driver.at(7.0)
    assert driver.delete(10.0).wake_at == 40.0
    driver.pod["metadata"]["deletionGracePeriodSeconds"] = 5
    assert driver.at(12.0).wake_at == 15.0
    step = driver.at(15.0)
    assert (_terminated(driver)["finishedAt"], step.remove) == (15.0, True)
    driver.pod["metadata"]["deletionGracePeriodSeconds"] = 0  # the kubelet's grace-0 delete; a finalizer holds it
    assert driver.at(16.0).status is None


def test_a_container_not_running_at_the_deletion_shows_its_status_unknown_and_the_pod_fails() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(0.0)
    step = driver.delete(3.0)
    assert step.wake_at == 6.0  # removal, not the start at 5
    assert driver.snap() == ("Failed", "False", "terminated:ContainerStatusUnknown", 0)
    assert _terminated(driver) == {"exitCode": 137, "reason": "ContainerStatusUnknown",
                                   "message": "The container could not be located when the pod was terminated",
                                   "finishedAt": 3.0}
    assert driver.at(5.5).status is None


def test_first_call_after_deletion_stops_the_containers_as_of_the_deletion() -> None:
    pod = make_pod("app:v1")
    pod["metadata"]["deletionTimestamp"] = 6.0
    driver = Driver(pod, PROFILE)
    step = driver.at(7.0)
    assert driver.snap() == ("Succeeded", "False", "terminated:Completed", 0)
    assert _terminated(driver)["finishedAt"] == 6.0
    assert step.wake_at == 9.0


def test_stopping_a_pod_is_not_reported_as_a_readiness_failure_or_a_pod_failure() -> None:
    profile = KubeletProfile(stop_seconds=60.0)
    driver = Driver(make_pod("app:v1"), profile)
    driver.at(7.0)
    driver.delete(10.0)
    step = driver.at(40.0)
    assert step.status is not None and step.status["phase"] == "Failed"
    assert [n.type for n in step.notes] == []


def test_faults_after_deletion_are_ignored() -> None:
    driver = Driver(make_pod("app:v1"), KubeletProfile(stop_seconds=2.0))
    driver.at(7.0)
    driver.delete(10.0)
    step = driver.fault("fail", 11.0)
    assert step.status is None
    assert driver.snap() == ("Running", "True", "running", 0)
    assert step.runtime.faults == ()


def test_failed_pod_is_removed_on_the_same_schedule() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(7.0)
    driver.fault("fail", 8.0)
    step = driver.delete(10.0)
    assert (step.wake_at, driver.at(13.0).remove) == (13.0, True)
