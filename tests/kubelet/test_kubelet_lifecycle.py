"""Golden timelines of the simulated kubelet: what a pod looks like at each wake, per image behaviour."""

from __future__ import annotations

from typing import Any

import pytest
from kubelet_drive import Driver, condition, make_pod

from rollwise.kubelet.agent import PodRuntime, advance
from rollwise.kubelet.profiles import ImageBehaviour, KubeletProfile

IMAGES = {
    "typo": ImageBehaviour(fail="ImagePullBackOff"),
    "errpull": ImageBehaviour(fail="ErrImagePull"),
    "config": ImageBehaviour(fail="CreateContainerConfigError"),
    "crash": ImageBehaviour(fail="CrashLoopBackOff"),
    "unready": ImageBehaviour(ready=False),
    "slow": ImageBehaviour(start_seconds=60.0, ready_seconds=10.0),
}
PROFILE = KubeletProfile(images=IMAGES)

Row = tuple[float, tuple[str, str, str, int], float | None]
CC = "ContainerCreating"
TIMELINES: dict[str, tuple[KubeletProfile, str, list[Row]]] = {
    "healthy": (PROFILE, "app:v1", [
        (0.0, ("Pending", "False", CC, 0), 5.0),
        (5.0, ("Running", "False", "running", 0), 7.0),
        (7.0, ("Running", "True", "running", 0), None),
    ]),
    "profile-timings": (KubeletProfile(start_seconds=1.0, ready_seconds=0.0), "app:v1", [
        (0.0, ("Pending", "False", CC, 0), 1.0),
        (1.0, ("Running", "True", "running", 0), None),
    ]),
    "per-image-slow": (PROFILE, "slow", [
        (0.0, ("Pending", "False", CC, 0), 60.0),
        (60.0, ("Running", "False", "running", 0), 70.0),
        (70.0, ("Running", "True", "running", 0), None),
    ]),
    "never-ready": (PROFILE, "unready", [
        (0.0, ("Pending", "False", CC, 0), 5.0),
        (5.0, ("Running", "False", "running", 0), None),
        (500.0, ("Running", "False", "running", 0), None),
    ]),
    "image-pull-back-off": (PROFILE, "typo", [
        (0.0, ("Pending", "False", CC, 0), 5.0),
        (5.0, ("Pending", "False", "ErrImagePull", 0), 6.0),
        (6.0, ("Pending", "False", "ImagePullBackOff", 0), 16.0),
        (16.0, ("Pending", "False", "ErrImagePull", 0), 17.0),
        (17.0, ("Pending", "False", "ImagePullBackOff", 0), 37.0),
        (37.0, ("Pending", "False", "ErrImagePull", 0), 38.0),
        (38.0, ("Pending", "False", "ImagePullBackOff", 0), 78.0),
    ]),
    "err-image-pull": (PROFILE, "errpull", [
        (5.0, ("Pending", "False", "ErrImagePull", 0), 6.0),
        (6.0, ("Pending", "False", "ImagePullBackOff", 0), 16.0),
    ]),
    "create-container-config-error": (PROFILE, "config", [
        (0.0, ("Pending", "False", CC, 0), 5.0),
        (5.0, ("Pending", "False", "CreateContainerConfigError", 0), None),
        (900.0, ("Pending", "False", "CreateContainerConfigError", 0), None),
    ]),
    "crash-loop-back-off": (PROFILE, "crash", [
        (0.0, ("Pending", "False", CC, 0), 5.0),
        (5.0, ("Running", "False", "running", 0), 7.0),
        (7.0, ("Running", "False", "terminated:Error", 0), 8.0),
        (8.0, ("Running", "False", "CrashLoopBackOff", 0), 17.0),  # 10 s from the exit at 7
        (17.0, ("Running", "False", "running", 1), 19.0),
        (19.0, ("Running", "False", "terminated:Error", 1), 20.0),
        (20.0, ("Running", "False", "CrashLoopBackOff", 1), 39.0),  # 20 s
        (39.0, ("Running", "False", "running", 2), 41.0),
        (41.0, ("Running", "False", "terminated:Error", 2), 42.0),
        (42.0, ("Running", "False", "CrashLoopBackOff", 2), 81.0),  # 40 s
    ]),
}


def step_twice(driver: Driver, now: float) -> Any:
    """One loop call, then the same call again, which must change nothing."""
    step = driver.at(now)
    again = advance(driver.pod, step.runtime, driver.profile, now)
    assert again.status is None
    assert again.runtime == step.runtime
    assert again.wake_at == step.wake_at
    assert not again.notes
    return step


@pytest.mark.parametrize("case", list(TIMELINES), ids=list(TIMELINES))
def test_golden_timeline_and_calling_twice_at_one_instant_changes_nothing(case: str) -> None:
    profile, image, rows = TIMELINES[case]
    driver = Driver(make_pod(image), profile)
    for now, expected, wake in rows:
        step = step_twice(driver, now)
        assert (now, driver.snap()) == (now, expected)
        assert (now, step.wake_at) == (now, wake)
        assert not step.remove


@pytest.mark.parametrize("case", list(TIMELINES), ids=list(TIMELINES))
def test_one_late_call_catches_up_to_the_same_status_as_following_every_wake(case: str) -> None:
    profile, image, rows = TIMELINES[case]
    end = rows[-1][0] + 0.5
    stepwise = Driver(make_pod(image), profile)
    now: float | None = 0.0
    while now is not None and now <= end:
        now = stepwise.at(now).wake_at
    stepwise.at(end)
    late = Driver(make_pod(image), profile)
    late.at(end)
    assert late.status == stepwise.status


def test_crash_loop_carries_the_last_exit_in_last_state() -> None:
    driver = Driver(make_pod("crash"), PROFILE)
    driver.at(8.0)
    cs = driver.status["containerStatuses"][0]
    assert cs["state"]["waiting"]["message"] == "back-off 10s restarting failed container=app"
    assert cs["lastState"] == {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": 5.0, "finishedAt": 7.0}}
    assert (cs["ready"], cs["started"]) == (False, False)
    driver.at(17.0)
    cs = driver.status["containerStatuses"][0]
    assert cs["state"] == {"running": {"startedAt": 17.0}}
    assert cs["started"] is True
    driver.at(19.0)
    cs = driver.status["containerStatuses"][0]
    assert cs["state"]["terminated"] == {"exitCode": 1, "reason": "Error", "startedAt": 17.0, "finishedAt": 19.0}
    assert cs["lastState"]["terminated"]["finishedAt"] == 7.0


def test_crash_loop_back_off_is_capped_at_five_minutes_over_a_day() -> None:
    driver = Driver(make_pod("crash"), PROFILE)
    wakes = []
    now: float | None = 0.0
    while now is not None and now <= 86400.0:
        wakes.append(now)
        now = driver.at(now).wake_at
    late = Driver(make_pod("crash"), PROFILE)
    late.at(wakes[-1])
    assert late.status == driver.status
    cs = driver.status["containerStatuses"][0]
    gaps = {b - a for a, b in zip(wakes[-30:], wakes[-29:], strict=False)}
    assert gaps == {1.0, 299.0, 2.0}  # terminated 1 s, CrashLoopBackOff until 300 s after the exit, run 2 s
    assert cs["restartCount"] > 280
    waits = [s.status["containerStatuses"][0]["state"].get("waiting") for s in driver.steps if s.status]
    messages = [w["message"] for w in waits if w and w["reason"] == "CrashLoopBackOff"]
    assert messages[:5] == [f"back-off {d} restarting failed container=app" for d in
                            ("10s", "20s", "40s", "1m20s", "2m40s")]
    assert set(messages[5:-1]) == {"back-off 5m0s restarting failed container=app"}


def test_multiple_containers_pod_runs_once_all_started_and_is_ready_once_all_ready() -> None:
    driver = Driver(make_pod("app:v1", "slow"), PROFILE)
    driver.at(5.0)
    assert driver.snap(0) == ("Pending", "False", "running", 0)
    assert driver.snap(1) == ("Pending", "False", CC, 0)
    step = driver.at(7.0)
    assert driver.status["containerStatuses"][0]["ready"] is True
    assert condition(driver.status, "ContainersReady")["status"] == "False"
    assert condition(driver.status, "Ready")["message"] == "containers with unready status: [side1]"
    assert step.wake_at == 60.0
    driver.at(60.0)
    assert driver.snap(1) == ("Running", "False", "running", 0)
    driver.at(70.0)
    assert driver.snap(1) == ("Running", "True", "running", 0)
    assert condition(driver.status, "Ready")["lastTransitionTime"] == 70.0


def test_multiple_containers_one_never_ready_keeps_the_pod_unready() -> None:
    driver = Driver(make_pod("app:v1", "unready"), PROFILE)
    step = driver.at(100.0)
    assert driver.snap(0)[:2] == ("Running", "False")
    assert step.wake_at is None


def test_last_transition_time_changes_only_when_the_condition_status_changes() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(0.0)
    driver.at(5.0)
    ready = condition(driver.status, "Ready")
    assert (ready["status"], ready["lastTransitionTime"]) == ("False", 0.0)  # Pending → Running: still False
    driver.at(7.0)
    driver.pod["metadata"]["labels"] = {"touched": "yes"}  # an unrelated change makes the loop call again
    assert driver.at(30.0).status is None
    assert [(c["type"], c["status"], c["lastTransitionTime"]) for c in driver.status["conditions"]] == [
        ("Initialized", "True", 0.0), ("Ready", "True", 7.0), ("ContainersReady", "True", 7.0),
        ("PodScheduled", "True", 0.0),
    ]


def test_late_first_call_dates_the_ready_transition_when_it_happened() -> None:
    driver = Driver(make_pod("app:v1", created=10.0), PROFILE)
    step = driver.at(100.0)
    assert condition(driver.status, "Ready") == {"type": "Ready", "status": "True", "lastTransitionTime": 17.0}
    assert driver.status["startTime"] == 10.0
    assert driver.status["containerStatuses"][0]["state"] == {"running": {"startedAt": 15.0}}
    assert [n.type for n in step.notes] == ["PodRunning", "PodReady"]


def test_changed_image_restarts_the_container_with_the_new_image() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(7.0)
    driver.pod["spec"]["containers"][0]["image"] = "app:v2"
    step = driver.at(20.0)
    assert driver.snap() == ("Running", "False", CC, 1)
    assert driver.status["containerStatuses"][0]["image"] == "app:v2"
    assert driver.status["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 137
    assert step.wake_at == 25.0
    driver.at(27.0)
    assert driver.snap() == ("Running", "True", "running", 1)


def test_changed_image_to_a_bad_one_waits_in_image_pull_back_off() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(7.0)
    driver.pod["spec"]["containers"][0]["image"] = "typo"
    driver.at(20.0)  # the loop calls advance when the pod object changes
    driver.at(26.0)
    assert driver.snap() == ("Running", "False", "ImagePullBackOff", 1)


def test_recreated_pod_with_a_new_uid_gets_a_fresh_runtime() -> None:
    old = Driver(make_pod("app:v1", uid="old"), PROFILE)
    old.at(7.0)
    fresh = make_pod("app:v1", uid="new", created=50.0)
    step = advance(fresh, old.runtime, PROFILE, 50.0)
    assert step.runtime.uid == "new"
    assert step.status is not None
    assert step.status["containerStatuses"][0]["state"] == {"waiting": {"reason": CC}}
    assert step.wake_at == 55.0


def test_initial_runtime_is_empty() -> None:
    assert PodRuntime.initial() == PodRuntime()
    assert PodRuntime.initial().containers == ()


def test_containers_created_at_one_instant_are_one_runtime_and_a_fault_on_one_pod_leaves_the_other() -> None:
    a = Driver(make_pod("app:v1", uid="a", name="web-0"))
    b = Driver(make_pod("app:v1", uid="b", name="web-1"))
    a.at(0.0)
    b.at(0.0)
    assert a.runtime.containers[0] is b.runtime.containers[0]  # frozen: shared, never changed in place
    a.fault("fail", 50.0)
    a.at(60.0)
    b.at(60.0)
    assert a.snap()[0] == "Failed" and b.snap() == ("Running", "True", "running", 0)
