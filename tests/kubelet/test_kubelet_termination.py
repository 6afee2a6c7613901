"""Graceful deletion: the status freezes at deletionTimestamp and the pod goes at + min(terminationSeconds, grace)."""

from __future__ import annotations

from typing import Any

import pytest
from kubelet_drive import Driver, make_pod

from rollwise.kubelet.agent import removal_time
from rollwise.kubelet.profiles import KubeletProfile

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


def test_status_stays_as_it_was_while_the_pod_shuts_down() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(7.0)
    before = dict(driver.status)
    step = driver.delete(10.0)
    assert step.status is None
    assert driver.at(12.0).status is None
    assert driver.status == before
    assert driver.snap() == ("Running", "True", "running", 0)


def test_terminating_pod_does_not_progress_past_its_deletion() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(0.0)
    step = driver.delete(3.0)
    assert step.wake_at == 6.0  # removal, not the start at 5
    driver.at(5.5)
    assert driver.snap() == ("Pending", "False", "ContainerCreating", 0)


def test_first_call_after_deletion_shows_the_status_as_of_the_deletion() -> None:
    pod = make_pod("app:v1")
    pod["metadata"]["deletionTimestamp"] = 6.0
    driver = Driver(pod, PROFILE)
    step = driver.at(7.0)
    assert driver.snap() == ("Running", "False", "running", 0)
    assert step.wake_at == 9.0


def test_faults_after_deletion_are_ignored() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
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
