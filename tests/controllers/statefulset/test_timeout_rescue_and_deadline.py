"""podProgressTimeoutSeconds rescues a rollout stuck on an outdated broken pod (seed 000 alternative 1,
kubernetes#67250), and the progress deadline fires once per stall while the controller retries the same pod."""

from __future__ import annotations

import pytest
from builders import make_set
from harness import Harness

from rollwise.controllers.plan import DeletePod


def _crash(h: Harness, name: str) -> None:
    pod = h.pod(name)
    h.cluster.update_status({**pod, "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": h.now}],
        "containerStatuses": [{"name": "nginx", "ready": False, "restartCount": 3,
                               "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})


def _progressing(h: Harness) -> dict:
    return next(c for c in h.status()["conditions"] if c["type"] == "Progressing")


def _stuck_top(budget: int = 1, **spec: object) -> Harness:
    """OrderedReady, podProgressTimeoutSeconds 20: foo-2 rolled to a crashing image at t=0."""
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": budget, "podProgressTimeoutSeconds": 20}}
    h = Harness(make_set(replicas=3, updateStrategy=strategy, **spec))
    h.settle()
    h.set_image("nginx:crash")
    for _ in range(budget):
        h.sync()
        for pod in h.pods():
            if pod["metadata"].get("deletionTimestamp") is not None:
                h.finish_termination(pod["metadata"]["name"])
    h.sync()
    _crash(h, "foo-2" if budget == 1 else "foo-1")
    return h


@pytest.mark.parametrize("budget", [1, 2])
def test_the_timeout_replaces_an_outdated_broken_pod_once_the_template_is_fixed(budget: int) -> None:
    h = _stuck_top(budget)
    broken = "foo-2" if budget == 1 else "foo-1"
    h.now = 5.0
    h.set_image("nginx:fixed")
    assert not h.sync().of_type(DeletePod), "not before the pod has been unready for the timeout"
    h.now = 25.0
    deleted = h.sync().of_type(DeletePod)
    assert [d.name for d in deleted] == [broken]
    assert "outdated" in deleted[0].reason
    h.finish_termination(broken)
    h.sync()
    assert h.images()[broken] == "nginx:fixed"


def test_an_outdated_pod_that_was_ready_gets_the_timeout_from_when_it_stopped_being_ready() -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"podProgressTimeoutSeconds": 20}}
    h = Harness(make_set(replicas=3, updateStrategy=strategy))
    h.settle()
    h.now = 1000.0
    h.set_image("nginx:new")
    _crash(h, "foo-2")  # a pod at the old revision, Ready for long, stops being Ready now
    assert not h.sync().of_type(DeletePod)
    h.now = 1021.0
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-2"]


def test_below_the_partition_the_timeout_leaves_outdated_pods_alone() -> None:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": 3, "podProgressTimeoutSeconds": 20}}
    h = Harness(make_set(replicas=3, updateStrategy=strategy))
    h.settle()
    h.set_image("nginx:new")
    _crash(h, "foo-2")
    h.now = 500.0
    assert not h.sync().of_type(DeletePod)


def test_the_deadline_fires_once_and_progressing_stays_false_while_the_same_pod_is_retried() -> None:
    h = _stuck_top(progressDeadlineSeconds=60)
    seen: list[tuple[str, str]] = []
    for t in range(1, 1500):
        h.now = float(t)
        h.sync()
        for pod in h.pods():
            if pod["metadata"].get("deletionTimestamp") is not None:
                h.finish_termination(pod["metadata"]["name"])
                h.sync()
                _crash(h, pod["metadata"]["name"])
        progressing = _progressing(h)
        seen.append((progressing["status"], progressing["reason"]))
    retries = [e for e in h.events if e.startswith("PodProgressTimeout")]
    assert len(retries) >= 4, "the controller retried the pod several times"
    first = seen.index(("False", "ProgressDeadlineExceeded"))
    assert set(seen[first:]) == {("False", "ProgressDeadlineExceeded")}, "no flap back to True"
    assert len([e for e in h.events if e.startswith("ProgressDeadlineExceeded")]) == 1


def test_a_pod_becoming_available_at_the_update_revision_is_progress() -> None:
    h = _stuck_top(progressDeadlineSeconds=60)
    h.now = 100.0
    h.sync()
    assert _progressing(h)["reason"] == "ProgressDeadlineExceeded"
    h.make_ready("foo-2")
    h.now = 101.0
    h.sync()
    assert _progressing(h)["status"] == "True"
    assert _progressing(h)["lastUpdateTime"] == 101.0
