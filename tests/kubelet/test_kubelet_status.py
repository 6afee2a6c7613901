"""Status shapes and event-stream helpers: waiting reasons, notes, readiness gates, fields the kubelet leaves alone."""

from __future__ import annotations

import hashlib

import pytest
from kubelet_drive import Driver, condition, make_pod

from rollwise.kubelet.agent import Note, container_waiting_reasons
from rollwise.kubelet.profiles import ImageBehaviour, KubeletProfile
from rollwise.kubelet.status import status_notes

PROFILE = KubeletProfile(images={"typo": ImageBehaviour(fail="ImagePullBackOff"),
                                 "config": ImageBehaviour(fail="CreateContainerConfigError")})


@pytest.mark.parametrize(
    ("images", "now", "reasons"),
    [
        (("app:v1",), 0.0, ["ContainerCreating"]),
        (("app:v1",), 7.0, []),
        (("app:v1", "typo", "config"), 6.0, ["ImagePullBackOff", "CreateContainerConfigError"]),
    ],
    ids=["creating", "running", "mixed"],
)
def test_container_waiting_reasons_lists_each_waiting_container_in_order(
    images: tuple[str, ...], now: float, reasons: list[str]
) -> None:
    driver = Driver(make_pod(*images), PROFILE)
    driver.at(now)
    assert container_waiting_reasons(driver.status) == reasons


def test_container_waiting_reasons_of_an_empty_status_is_empty() -> None:
    assert container_waiting_reasons(None) == []
    assert container_waiting_reasons({}) == []


def test_notes_follow_the_pod_through_its_life() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    seen = [driver.at(t).notes for t in (0.0, 5.0, 7.0)]
    seen.append(driver.fault("unready", 10.0).notes)
    seen.append(driver.fault("fail", 11.0).notes)
    assert seen == [
        (Note(type="ContainerWaiting", reason="ContainerCreating", container="app"),),
        (Note(type="PodRunning"),),
        (Note(type="PodReady"),),
        (Note(type="PodNotReady"),),
        (Note(type="PodFailed"),),
    ]


def test_notes_report_each_new_waiting_reason_only_once() -> None:
    old = {"containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}
    same = {"containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "ImagePullBackOff",
                                                                        "message": "other"}}}]}
    new = {"containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "ErrImagePull"}}}]}
    assert status_notes(old, same) == ()
    assert status_notes(old, new) == (Note(type="ContainerWaiting", reason="ErrImagePull", container="app"),)


def test_status_has_the_kubernetes_shape() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(7.0)
    status = driver.status
    assert set(status) == {"phase", "conditions", "containerStatuses", "startTime", "podIP", "podIPs"}
    assert status["containerStatuses"] == [{
        "name": "app", "image": "app:v1", "imageID": "sha256:" + hashlib.sha256(b"app:v1").hexdigest(),
        "ready": True, "started": True, "restartCount": 0, "state": {"running": {"startedAt": 5.0}}, "lastState": {},
    }]
    assert status["podIPs"] == [{"ip": status["podIP"]}]
    assert status["podIP"].startswith("10.244.")


def test_pod_ip_is_stable_per_uid_and_differs_between_pods() -> None:
    a, b, a_again = (Driver(make_pod("app:v1", uid=u), PROFILE) for u in ("u1", "u2", "u1"))
    for d in (a, b, a_again):
        d.at(0.0)
    assert a.status["podIP"] == a_again.status["podIP"] != b.status["podIP"]


def test_readiness_gate_holds_ready_until_its_condition_is_true() -> None:
    pod = make_pod("app:v1")
    pod["spec"]["readinessGates"] = [{"conditionType": "rollwise.dev/quorum"}]
    driver = Driver(pod, PROFILE)
    driver.at(7.0)
    assert condition(driver.status, "ContainersReady")["status"] == "True"
    ready = condition(driver.status, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "ReadinessGatesNotReady")
    gate = {"type": "rollwise.dev/quorum", "status": "True", "lastTransitionTime": 10.0}
    driver.status["conditions"].append(gate)  # written by someone else (the quorum model)
    step = driver.at(10.0)
    assert condition(driver.status, "Ready") == {"type": "Ready", "status": "True", "lastTransitionTime": 10.0}
    assert condition(driver.status, "rollwise.dev/quorum") == gate
    assert [n.type for n in step.notes] == ["PodReady"]


def test_status_fields_the_kubelet_does_not_own_are_kept() -> None:
    driver = Driver(make_pod("app:v1"), PROFILE)
    driver.at(0.0)
    driver.status["nominatedNodeName"] = "node-a"
    driver.at(5.0)
    assert driver.status["nominatedNodeName"] == "node-a"


def test_a_model_decided_ready_counts_from_the_probe_tick_not_the_profile_timer() -> None:
    """An application model (the quorum probe) says Ready at t=15 for a container that started at 10 with
    readySeconds 1: the Ready condition turns True at 15, so minReadySeconds counts from 15, not from 11."""
    from kubelet_drive import condition, make_pod

    from rollwise.kubelet.agent import PodRuntime, advance
    from rollwise.kubelet.profiles import KubeletProfile

    profile = KubeletProfile(start_seconds=10.0, ready_seconds=1.0)
    pod = make_pod("app:v1")
    runtime = PodRuntime.initial()
    for now in (0.0, 10.0, 12.0, 15.0, 20.0):
        ready = now >= 15.0  # the model's verdict, and since when it holds
        step = advance(pod, runtime, profile, now, readiness={"app": (True, 15.0) if ready else (False, 0.0)})
        runtime = step.runtime
        if step.status is not None:
            pod = {**pod, "status": step.status}
        assert condition(pod["status"], "Ready")["status"] == ("True" if ready else "False"), now
    assert condition(pod["status"], "Ready")["lastTransitionTime"] == 15.0
