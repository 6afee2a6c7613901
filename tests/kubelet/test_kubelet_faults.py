"""Pod faults (crash, unready, recover, fail, kill) as the loop applies them: apply_fault, then advance."""

from __future__ import annotations

import pytest
from kubelet_drive import Driver, condition, make_pod

from rollwise.kubelet.agent import FAULTS, PodRuntime, advance, apply_fault
from rollwise.kubelet.profiles import ImageBehaviour, KubeletProfile

PROFILE = KubeletProfile(images={"crash": ImageBehaviour(fail="CrashLoopBackOff"),
                                 "typo": ImageBehaviour(fail="ImagePullBackOff")})
Row = tuple[float, tuple[str, str, str, int], float | None]


def ready_driver(*images: str, profile: KubeletProfile = PROFILE) -> Driver:
    driver = Driver(make_pod(*(images or ("app:v1",))), profile)
    driver.at(0.0)
    driver.at(5.0)
    driver.at(7.0)
    return driver


def follow(driver: Driver, rows: list[Row]) -> None:
    for now, expected, wake in rows:
        step = driver.at(now)
        assert (now, driver.snap(), step.wake_at) == (now, expected, wake)


def test_crash_on_a_ready_pod_exits_now_and_then_crash_loops() -> None:
    driver = ready_driver()
    step = driver.fault("crash", 20.0)
    assert (driver.snap(), step.wake_at) == (("Running", "False", "terminated:Error", 0), 21.0)
    assert condition(driver.status, "Ready")["lastTransitionTime"] == 20.0
    assert driver.status["containerStatuses"][0]["state"]["terminated"]["startedAt"] == 5.0
    assert [n.type for n in step.notes] == ["PodNotReady"]
    follow(driver, [
        (21.0, ("Running", "False", "CrashLoopBackOff", 0), 30.0),
        (30.0, ("Running", "False", "running", 1), 32.0),
        (32.0, ("Running", "False", "terminated:Error", 1), 33.0),
        (33.0, ("Running", "False", "CrashLoopBackOff", 1), 52.0),
    ])


def test_crash_while_creating_crash_loops_once_started() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(0.0)
    driver.fault("crash", 2.0)
    follow(driver, [
        (5.0, ("Running", "False", "running", 0), 7.0),
        (7.0, ("Running", "False", "terminated:Error", 0), 8.0),
    ])


def test_unready_fails_readiness_but_the_container_keeps_running() -> None:
    driver = ready_driver()
    step = driver.fault("unready", 20.0)
    assert (driver.snap(), step.wake_at) == (("Running", "False", "running", 0), None)
    assert driver.status["containerStatuses"][0]["started"] is True
    assert condition(driver.status, "Ready")["lastTransitionTime"] == 20.0


def test_recover_keeps_the_not_ready_transition_time_until_ready_again() -> None:
    driver = ready_driver()
    driver.fault("unready", 20.0)
    driver.fault("recover", 30.0)  # the readiness clock restarts, but Ready has been False since 20
    assert condition(driver.status, "Ready")["lastTransitionTime"] == 20.0
    driver.at(32.0)
    assert condition(driver.status, "Ready")["lastTransitionTime"] == 32.0


@pytest.mark.parametrize(
    ("fault", "at", "rows"),
    [
        ("unready", 20.0, [(30.0, ("Running", "False", "running", 0), 32.0),
                           (32.0, ("Running", "True", "running", 0), None)]),
        ("crash", 20.0, [(25.0, ("Running", "False", "running", 1), 27.0),  # restarted now, not after the back-off
                         (27.0, ("Running", "True", "running", 1), None),
                         (400.0, ("Running", "True", "running", 1), None)]),
    ],
    ids=["after-unready", "after-crash-in-back-off"],
)
def test_recover_runs_the_container_again_and_it_is_ready_after_ready_seconds(
    fault: str, at: float, rows: list[Row]
) -> None:
    driver = ready_driver()
    driver.fault(fault, at)
    step = driver.fault("recover", rows[0][0])
    assert (driver.snap(), step.wake_at) == rows[0][1:]
    follow(driver, rows[1:])


def test_recover_on_a_running_crashing_container_keeps_it_running() -> None:
    driver = ready_driver()
    driver.fault("crash", 20.0)
    driver.at(30.0)  # restarted by the back-off, running until 32
    driver.fault("recover", 31.0)
    assert driver.snap() == ("Running", "False", "running", 1)
    assert driver.status["containerStatuses"][0]["state"] == {"running": {"startedAt": 30.0}}
    follow(driver, [(33.0, ("Running", "True", "running", 1), None)])


@pytest.mark.parametrize(
    ("image", "at"),
    [("app:v1", 20.0), ("app:v1", 6.0), ("crash", 25.0), ("typo", 25.0)],
    ids=["healthy-ready", "healthy-starting", "crashing-image", "bad-image"],
)
def test_recover_without_a_fault_changes_nothing(image: str, at: float) -> None:
    driver = Driver(make_pod(image), PROFILE)
    driver.at(at)
    before = driver.status
    step = driver.fault("recover", at)
    assert step.status is None
    assert driver.status == before


def test_recover_does_not_fix_a_crashing_image() -> None:
    driver = Driver(make_pod("crash"), PROFILE)
    driver.fault("unready", 0.0)
    driver.at(9.0)
    driver.fault("recover", 10.0)
    assert driver.snap() == ("Running", "False", "running", 1)
    follow(driver, [(12.0, ("Running", "False", "terminated:Error", 1), 13.0)])


def test_fail_makes_the_pod_failed_for_good() -> None:
    driver = ready_driver()
    step = driver.fault("fail", 20.0)
    assert (driver.snap(), step.wake_at) == (("Failed", "False", "terminated:Error", 0), None)
    assert driver.status["containerStatuses"][0]["state"]["terminated"] == {
        "exitCode": 1, "reason": "Error", "startedAt": 5.0, "finishedAt": 20.0}
    assert [n.type for n in step.notes] == ["PodNotReady", "PodFailed"]
    for fault in ("recover", "kill", "crash", "unready", "fail"):
        assert driver.fault(fault, 30.0).status is None
    assert driver.snap() == ("Failed", "False", "terminated:Error", 0)


def test_fail_while_creating_records_no_start_time() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.fault("fail", 2.0)
    assert driver.snap()[0] == "Failed"
    assert driver.status["containerStatuses"][0]["state"] == {
        "terminated": {"exitCode": 1, "reason": "Error", "finishedAt": 2.0}}


def test_kill_exits_once_restarts_at_once_and_is_ready_after_ready_seconds() -> None:
    driver = ready_driver()
    step = driver.fault("kill", 20.0)
    assert (driver.snap(), step.wake_at) == (("Running", "False", "running", 1), 22.0)
    cs = driver.status["containerStatuses"][0]
    assert cs["state"] == {"running": {"startedAt": 20.0}}
    assert cs["lastState"] == {"terminated": {"exitCode": 137, "reason": "Error", "startedAt": 5.0,
                                              "finishedAt": 20.0}}
    follow(driver, [(22.0, ("Running", "True", "running", 1), None)])


def test_kill_with_a_restart_delay_shows_the_exit_first() -> None:
    driver = ready_driver(profile=KubeletProfile(kill_restart_seconds=1.0))
    step = driver.fault("kill", 20.0)
    assert (driver.snap(), step.wake_at) == (("Running", "False", "terminated:Error", 0), 21.0)
    follow(driver, [(21.0, ("Running", "False", "running", 1), 23.0),
                    (23.0, ("Running", "True", "running", 1), None)])


def test_kill_of_a_container_that_is_not_running_changes_nothing() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(2.0)
    assert driver.fault("kill", 3.0).status is None
    follow(driver, [(5.0, ("Running", "False", "running", 0), 7.0)])


def test_fault_on_one_named_container_leaves_the_others_alone() -> None:
    driver = ready_driver("app:v1", "app:v1")
    driver.fault("kill", 20.0, container="side1")
    assert driver.snap(0) == ("Running", "False", "running", 0)
    assert driver.snap(1) == ("Running", "False", "running", 1)
    assert driver.status["containerStatuses"][0]["ready"] is True


def test_fault_applied_before_a_late_call_is_applied_at_its_own_time() -> None:
    stepwise = ready_driver()
    stepwise.fault("crash", 20.0)
    for now in (21.0, 30.0, 32.0, 33.0, 40.0):
        stepwise.at(now)
    late = ready_driver()
    late.runtime = apply_fault(late.pod, late.runtime, "crash", 20.0)
    late.at(40.0)
    assert late.status == stepwise.status


def test_faults_belong_to_one_pod_object_and_a_recreated_pod_starts_healthy() -> None:
    crashed = ready_driver()
    crashed.fault("crash", 20.0)
    recreated = make_pod("app:v1", uid="u2", created=30.0)
    step = advance(recreated, crashed.runtime, PROFILE, 30.0)
    assert step.runtime == PodRuntime(uid="u2", containers=step.runtime.containers)
    assert not step.runtime.containers[0].crashing
    pod = {**recreated, "status": step.status}
    assert advance(pod, step.runtime, PROFILE, 37.0).status["conditions"][1]["status"] == "True"


def test_unknown_fault_is_refused() -> None:
    with pytest.raises(ValueError, match="supported: crash, unready, recover, fail, kill"):
        apply_fault(make_pod("app:v1"), PodRuntime.initial(), "explode", 1.0)
    assert FAULTS == ("crash", "unready", "recover", "fail", "kill")


@pytest.mark.parametrize("fault", ["fail", "unready"])
def test_a_fault_given_before_the_kubelet_first_sees_the_pod_survives_its_first_look(fault: str) -> None:
    """The first look makes the containers' runtimes: the fault recorded before it is kept and applied."""
    pod = make_pod("app:v1")
    runtime = apply_fault(pod, PodRuntime.initial(), fault, 0.0)
    step = advance(pod, runtime, PROFILE, 0.0)
    driver = Driver(pod, PROFILE)
    driver.runtime = step.runtime
    driver.pod["status"] = step.status
    driver.at(10.0)
    assert step.runtime.uid == "u1"
    if fault == "fail":
        assert driver.status["phase"] == "Failed"
    else:  # started at 5 s, past readySeconds by 10 s, and still not Ready
        assert driver.snap()[:2] == ("Running", "False")
