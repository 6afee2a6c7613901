"""``spec.paused`` (Deployment's pause): no new rollout step for any strategy, while scaling and repairs go on."""

from __future__ import annotations

import pytest
from builders import make_set
from harness import Harness
from test_readiness import CustomHarness

from rollwise.api.features import FeatureGates
from rollwise.api.validation import validate_statefulset
from rollwise.controllers.plan import CreatePod, DeletePod

POLICIES = ["OrderedReady", "Parallel"]
ROLLING = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}


def _settled(policy: str = "OrderedReady", replicas: int = 3, **kw: object) -> Harness:
    h = Harness(make_set(replicas=replicas, policy=policy, **kw))  # type: ignore[arg-type]
    h.settle()
    return h


def _progressing(h: Harness) -> dict[str, object]:
    return next(c for c in h.status()["conditions"] if c["type"] == "Progressing")


def _pause(h: Harness, paused: bool = True) -> None:
    h.patch_set({"spec": {"paused": paused}})


@pytest.mark.parametrize("strategy", [ROLLING, {"type": "RollingUpdate",
                                                "rollingUpdate": {"maxUnavailable": 2, "podProgressTimeoutSeconds": 5}},
                                      {"type": "EnforcedRollingUpdate"}, {"type": "Recreate"}],
                         ids=["rolling", "rolling-budget-timeout", "enforced", "recreate"])
@pytest.mark.parametrize("policy", POLICIES)
def test_a_paused_set_deletes_no_pod_for_a_template_change(policy: str, strategy: dict[str, object]) -> None:
    h = _settled(policy, strategy=strategy)
    _pause(h)
    h.set_image("nginx:2")
    for _ in range(5):
        plan = h.sync()
        assert not plan.of_type(DeletePod)
        h.now += 60
    assert set(h.images().values()) == {"nginx"}
    progressing = _progressing(h)
    assert (progressing["status"], progressing["reason"]) == ("Unknown", "RolloutPaused")
    assert "rollout paused: 3 pods stay at their revision" in str(progressing["message"])


@pytest.mark.parametrize("policy", POLICIES)
def test_resume_rolls_every_pod(policy: str) -> None:
    h = _settled(policy, strategy=ROLLING)
    _pause(h)
    h.set_image("nginx:2")
    h.sync()
    _pause(h, False)
    h.settle()
    assert set(h.images().values()) == {"nginx:2"}
    assert _progressing(h)["reason"] == "RolloutComplete"


def test_a_step_under_way_finishes_and_no_next_one_starts() -> None:
    h = _settled("OrderedReady", strategy=ROLLING)
    h.set_image("nginx:2")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-2"]
    _pause(h)
    h.finish_termination("foo-2")
    created = h.sync().of_type(CreatePod)
    assert [c.pod["metadata"]["name"] for c in created] == ["foo-2"]
    assert created[0].revision == h.status()["updateRevision"]
    h.make_ready("foo-2")
    for _ in range(3):
        assert not h.sync().of_type(DeletePod)
    assert h.images() == {"foo-0": "nginx", "foo-1": "nginx", "foo-2": "nginx:2"}


@pytest.mark.parametrize("policy", POLICIES)
def test_a_paused_set_still_scales_and_repairs(policy: str) -> None:
    h = _settled(policy, strategy=ROLLING)
    _pause(h)
    h.set_image("nginx:2")
    h.sync()
    h.set_status("foo-1", phase="Failed")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-1"]
    h.patch_set({"spec": {"replicas": 4}})
    h.settle()
    assert h.names() == ["foo-0", "foo-1", "foo-2", "foo-3"]
    h.patch_set({"spec": {"replicas": 2}})
    h.settle()
    assert h.names() == ["foo-0", "foo-1"]
    assert h.images()["foo-0"] == "nginx"


def test_a_paused_recreate_scales_up_at_the_current_revision_so_old_and_new_never_mix() -> None:
    h = _settled("Parallel", strategy={"type": "Recreate"})
    current = h.status()["currentRevision"]
    _pause(h)
    h.set_image("nginx:2")
    h.patch_set({"spec": {"replicas": 5}})
    h.settle()
    assert set(h.pod_revisions().values()) == {current}
    _pause(h, False)
    h.settle()
    assert set(h.pod_revisions().values()) == {h.status()["updateRevision"]}


def test_the_progress_deadline_does_not_run_while_paused_and_restarts_at_resume() -> None:
    h = _settled("OrderedReady", strategy=ROLLING, progressDeadlineSeconds=30)
    _pause(h)
    h.set_image("nginx:2")
    h.sync()
    h.now += 600
    h.sync()
    assert _progressing(h)["reason"] == "RolloutPaused"
    _pause(h, False)
    h.sync()  # deletes foo-2; its replacement never becomes Ready
    resumed = h.now
    h.finish_termination("foo-2")
    h.sync()
    h.now = resumed + 20
    h.sync()
    assert _progressing(h)["reason"] == "RolloutInProgress"
    h.now = resumed + 31
    h.sync()
    assert _progressing(h)["reason"] == "ProgressDeadlineExceeded"


def test_a_paused_custom_set_that_has_nothing_to_roll_stays_ready() -> None:
    h = CustomHarness(make_set(replicas=2))
    h.settle()
    _pause(h)
    h.sync()
    ready = next(c for c in h.status()["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True"
    h.set_image("nginx:2")
    h.sync()
    ready = next(c for c in h.status()["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "RolloutPaused")



def test_a_paused_that_is_not_a_boolean_is_refused_with_its_path() -> None:
    errors = validate_statefulset(make_set(paused="yes"), gates=FeatureGates())
    assert [str(e) for e in errors] == ['spec.paused: Invalid value: "yes": must be a boolean']


@pytest.mark.parametrize("strategy", [ROLLING, {"type": "EnforcedRollingUpdate"}, {"type": "Recreate"},
                                      {"type": "OnDelete"}], ids=["rolling", "enforced", "recreate", "on-delete"])
@pytest.mark.parametrize("policy", POLICIES)
def test_a_paused_set_writes_its_status_once_however_long_it_stays_paused(policy: str,
                                                                         strategy: dict[str, object]) -> None:
    h = _settled(policy, strategy=strategy)
    _pause(h)
    h.set_image("nginx:2")
    h.sync()
    h.sync()
    since = _progressing(h)["lastUpdateTime"]
    for later in (0.25, 1.0, 30.0, 3600.0):
        h.now += later
        assert not h.sync().actions, f"{later} s later: a write while nothing changed but the clock"
    assert _progressing(h)["lastUpdateTime"] == since
    _pause(h, False)
    h.now += 5
    h.sync()
    assert _progressing(h)["lastUpdateTime"] == h.now, "a resume restarts the deadline's clock"
