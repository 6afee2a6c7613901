"""Properties over random fault sequences: idempotence, wakes in the future, and late calls catching up."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from kubelet_drive import Driver, make_pod

from rollwise.kubelet.agent import FAULTS, advance, apply_fault
from rollwise.kubelet.profiles import ImageBehaviour, KubeletProfile

PROFILE = KubeletProfile(images={
    "crash": ImageBehaviour(fail="CrashLoopBackOff"),
    "typo": ImageBehaviour(fail="ImagePullBackOff"),
    "unready": ImageBehaviour(ready=False),
})
images = st.sampled_from(["app:v1", "crash", "typo", "unready"])
faults = st.lists(st.tuples(st.integers(1, 400), st.sampled_from(FAULTS)), max_size=6)


def _comparable(status: dict) -> tuple:
    """Everything but condition transition times (a late call dates them from the timeline, a live loop keeps
    the first time it saw the status)."""
    conditions = [(c["type"], c["status"]) for c in status["conditions"]]
    return status["phase"], conditions, status["containerStatuses"]


@settings(max_examples=150, deadline=None)
@given(pod_images=st.lists(images, min_size=1, max_size=2), plan=faults, end=st.integers(0, 900))
def test_random_faults_keep_advance_idempotent_and_late_calls_catch_up(
    pod_images: list[str], plan: list[tuple[int, str]], end: int
) -> None:
    plan = sorted(plan)
    live = Driver(make_pod(*pod_images), PROFILE)
    now: float | None = 0.0
    todo = list(plan)
    while now is not None and now <= end:
        while todo and todo[0][0] <= now:
            at, fault = todo.pop(0)
            live.fault(fault, float(at))
        step = live.at(now)
        again = advance(live.pod, step.runtime, PROFILE, now)
        assert (again.status, again.runtime, again.wake_at) == (None, step.runtime, step.wake_at)
        assert step.wake_at is None or step.wake_at > now
        nxt = [x for x in (step.wake_at, float(todo[0][0]) if todo else None) if x is not None]
        now = min(nxt) if nxt else None
    for at, fault in todo:
        if at <= end:
            live.fault(fault, float(at))
    live.at(float(end))

    late = Driver(make_pod(*pod_images), PROFILE)
    for at, fault in plan:
        if at <= end:
            late.runtime = apply_fault(late.pod, late.runtime, fault, float(at))
    late.at(float(end))
    assert _comparable(late.status) == _comparable(live.status)
