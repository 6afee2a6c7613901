"""Pods that move together share their status parts, and a shared part is the very one each pod would build."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from kubelet_drive import Driver, make_pod

from rollwise.kubelet.agent import FAULTS
from rollwise.kubelet.containers import ContainerRuntime, ContainerView
from rollwise.kubelet.profiles import ImageBehaviour, KubeletProfile
from rollwise.kubelet.status import build_status

PROFILE = KubeletProfile(images={
    "crash": ImageBehaviour(fail="CrashLoopBackOff"),
    "typo": ImageBehaviour(fail="ImagePullBackOff"),
    "unready": ImageBehaviour(ready=False),
})
_IMAGES = st.sampled_from(["app:v1", "crash", "typo", "unready"])
# A fault time is an int or the equal float: the two print differently, so they must not share a part.
_FAULTS = st.lists(st.tuples(st.integers(1, 300), st.sampled_from(FAULTS), st.booleans()), max_size=4)


@settings(max_examples=100, deadline=None)
@given(pods=st.lists(st.tuples(st.lists(_IMAGES, min_size=1, max_size=2), _FAULTS, st.sampled_from([0, 0.0, 5])),
                     min_size=2, max_size=4),
       ticks=st.lists(st.integers(0, 700), min_size=1, max_size=25))
def test_every_pod_of_a_wave_prints_the_status_it_would_print_alone(
        pods: list[tuple[list[str], list[tuple[int, str, bool]], float]], ticks: list[int]) -> None:
    drivers = [Driver(make_pod(*images, uid=f"u{n}", name=f"web-{n}", created=created), PROFILE)
               for n, (images, _, created) in enumerate(pods)]
    for now in sorted(set(ticks)):
        for driver, (_, faults, _) in zip(drivers, pods, strict=True):
            for at, fault, as_int in faults:
                if at == now:
                    driver.fault(fault, at if as_int else float(at))
            driver.at(float(now))
    for driver, (images, faults, created) in zip(drivers, pods, strict=True):
        # The same pod again, after the others: nothing it reads depends on what they built.
        alone = Driver(make_pod(*images, uid="alone", name=driver.pod["metadata"]["name"], created=created), PROFILE)
        for now in sorted(set(ticks)):
            for at, fault, as_int in faults:
                if at == now:
                    alone.fault(fault, at if as_int else float(at))
            alone.at(float(now))
        assert json.dumps({**alone.status, "podIP": None, "podIPs": None}) == json.dumps(
            {**driver.status, "podIP": None, "podIPs": None})


def test_pods_that_move_at_one_instant_share_their_conditions_and_container_statuses() -> None:
    a = Driver(make_pod("app:v1", uid="a", name="web-0"))
    b = Driver(make_pod("app:v1", uid="b", name="web-1"))
    for now in (0.0, 30.0, 60.0):
        a.at(now)
        b.at(now)
        assert all(x is y for x, y in zip(a.status["conditions"], b.status["conditions"], strict=True))
        assert a.status["containerStatuses"][0] is b.status["containerStatuses"][0]
        assert a.status["podIP"] != b.status["podIP"]


def test_a_time_written_as_an_int_or_as_minus_zero_is_not_shared_with_the_equal_float() -> None:
    statuses = []
    for n, written in enumerate((5, 5.0, -0.0, 0.0)):
        view = ContainerView(state={"running": {"startedAt": written}}, last=None, ready=True, ready_since=1.0,
                             running=True, run_started_at=written, restart_count=0, ever_started=True)
        old = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": written}]}
        pod = {"metadata": {"name": f"web-{n}", "uid": f"u{n}", "creationTimestamp": 0.0}, "spec": {}, "status": old}
        statuses.append(build_status(pod, [(ContainerRuntime(name="app", image="app:v1"), view)], failed=False,
                                     t=10.0))
    ready = [next(c for c in s["conditions"] if c["type"] == "Ready") for s in statuses]
    assert [json.dumps(c["lastTransitionTime"]) for c in ready] == ["5", "5.0", "-0.0", "0.0"]
    assert [json.dumps(s["containerStatuses"][0]["state"]["running"]["startedAt"]) for s in statuses] == [
        "5", "5.0", "-0.0", "0.0"]
