"""EnforcedRollingUpdate (seed 003), podProgressTimeoutSeconds (seed 000 alt. 1), conditions and deadlines."""

from __future__ import annotations

import itertools

import pytest
from builders import make_set
from harness import Harness

from rollwise.api.features import ENFORCED_ROLLING_UPDATE, FeatureGates
from rollwise.api.meta import name_of
from rollwise.controllers.plan import DeletePod, EmitEvent

POLICIES = ["OrderedReady", "Parallel"]


def _crash(h: Harness, name: str) -> None:
    """The pod runs but its container crash-loops (what a broken image does)."""
    pod = h.pod(name)
    h.cluster.update_status({**pod, "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": h.now}],
        "containerStatuses": [{"name": "nginx", "ready": False, "restartCount": 3,
                               "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})


def _condition(h: Harness, ctype: str) -> dict:
    return next(c for c in h.status()["conditions"] if c["type"] == ctype)


def _break_top(h: Harness, image: str) -> None:
    """Roll to a broken image: the top pod is replaced and crash-loops."""
    h.set_image(image)
    for _ in range(4):
        h.sync()
        if "foo-2" in h.names() and h.pod("foo-2")["spec"]["containers"][0]["image"] == image:
            break
        h.step_pods()
    else:
        raise AssertionError("the top pod was never replaced")
    _crash(h, "foo-2")
    h.sync()


def enforced(policy: str = "OrderedReady", **block: object) -> Harness:
    strategy = {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 0, "maxUnavailable": 1,
                                                                           **block}}
    h = Harness(make_set(replicas=3, policy=policy, updateStrategy=strategy))
    h.settle()
    return h


@pytest.mark.parametrize("policy", POLICIES)
def test_rolling_update_stays_stuck_on_a_broken_pod_after_the_fix(policy: str) -> None:
    h = Harness(make_set(replicas=3, policy=policy))
    h.settle()
    _break_top(h, "nginx:crash")
    h.set_image("nginx:fixed")
    deletions = [d.name for _ in range(3) for d in h.sync().of_type(DeletePod)]
    if policy == "OrderedReady":
        assert deletions == [], "the upstream trap: OrderedReady waits for the broken pod forever"
    else:
        assert deletions == ["foo-2"], "Parallel replaces an already broken outdated pod (1.37)"


@pytest.mark.parametrize("policy", POLICIES)
def test_enforced_rolling_update_replaces_the_broken_pod_once_the_template_is_fixed(policy: str) -> None:
    h = enforced(policy)
    _break_top(h, "nginx:crash")
    h.set_image("nginx:fixed")
    plan = h.sync()
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-2"]
    reasons = [e.event_reason for e in plan.of_type(EmitEvent)]
    assert "ForcedReplacement" in reasons and "EnforcedRollingUpdateStarted" in reasons
    h.settle()
    assert set(h.images().values()) == {"nginx:fixed"}


def test_a_second_broken_template_updates_one_pod_and_halts() -> None:
    h = enforced()
    _break_top(h, "nginx:crash")
    assert _condition(h, "Progressing")["reason"] == "SafetyHalt"
    h.set_image("nginx:crash-again")
    for _ in range(8):
        h.sync()
        if "foo-2" in h.names() and h.pod("foo-2")["spec"]["containers"][0]["image"] == "nginx:crash-again":
            _crash(h, "foo-2")
        else:
            h.step_pods()
    h.sync()
    assert h.images() == {"foo-0": "nginx", "foo-1": "nginx", "foo-2": "nginx:crash-again"}
    progressing = _condition(h, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "SafetyHalt")
    assert "foo-2" in progressing["message"]
    assert sum(e.startswith("SafetyHalt") for e in h.events) == 2, "one event per halt, not per reconcile"


def test_enforced_falls_back_to_rolling_update_when_its_gate_is_off() -> None:
    gates = FeatureGates().with_overrides({ENFORCED_ROLLING_UPDATE: False})
    strategy = {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 0, "maxUnavailable": 1}}
    h = Harness(make_set(replicas=3, updateStrategy=strategy), gates=FeatureGates())
    h.settle()
    _break_top(h, "nginx:crash")
    h.gates = gates
    h.set_image("nginx:fixed")
    assert not h.sync().of_type(DeletePod), "as RollingUpdate: stuck under OrderedReady"


def test_enforced_does_not_hold_scale_down_on_a_broken_outdated_pod() -> None:
    h = enforced()
    _break_top(h, "nginx:crash")
    h.set_image("nginx:fixed")
    h.patch_set({"spec": {"replicas": 2}})
    deleted = [d.name for d in h.sync().of_type(DeletePod)]
    assert deleted == ["foo-2"]


def _recreated_pending_under_a_progress_timeout() -> Harness:
    """One replica, podProgressTimeoutSeconds 60: foo-0 recreated at t=0 at a new image and left Pending."""
    h = Harness(make_set(replicas=1, updateStrategy={
        "type": "RollingUpdate", "rollingUpdate": {"partition": 0, "podProgressTimeoutSeconds": 60}}))
    h.settle()
    h.set_image("nginx:slow")
    h.sync()
    h.finish_termination("foo-0")
    h.sync()
    return h


def test_pod_progress_timeout_replaces_a_pod_that_never_becomes_ready_with_back_off() -> None:
    h = _recreated_pending_under_a_progress_timeout()
    replaced_at = []
    for t in range(0, 1000, 5):
        h.now = float(t)
        plan = h.sync()
        if plan.of_type(DeletePod):
            replaced_at.append(t)
            h.finish_termination("foo-0")
            h.sync()
    gaps = [b - a for a, b in itertools.pairwise(replaced_at)]
    assert replaced_at[0] == 65
    assert gaps[:3] == [125, 245, 485], "each replacement doubles the time the next pod gets"
    assert any(e.startswith("PodProgressTimeout") for e in h.events)


def test_progress_deadline_sets_progressing_false_and_deletes_nothing() -> None:
    h = Harness(make_set(replicas=3, progressDeadlineSeconds=120))
    h.settle()
    _break_top(h, "nginx:crash")
    h.now = 100.0
    plan = h.sync()
    assert _condition(h, "Progressing")["status"] == "True"
    assert plan.requeue_after is not None and plan.requeue_after == pytest.approx(20.001)
    h.now = 200.0
    plan = h.sync()
    progressing = _condition(h, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("False", "ProgressDeadlineExceeded")
    assert "foo-2" in progressing["message"] and "CrashLoopBackOff" in progressing["message"]
    assert not plan.of_type(DeletePod)
    assert any(e.startswith("ProgressDeadlineExceeded") for e in h.events)


def test_progressing_message_names_the_pod_and_its_container_state() -> None:
    h = Harness(make_set(replicas=3))
    h.settle()
    _break_top(h, "nginx:crash")
    message = _condition(h, "Progressing")["message"]
    assert message == "waiting for foo-2 to become available: container nginx is CrashLoopBackOff"


def test_available_condition_follows_the_budget() -> None:
    h = Harness(make_set(replicas=3))
    h.settle()
    assert _condition(h, "Available")["status"] == "True"
    for name in ("foo-1", "foo-2"):
        _crash(h, name)
    h.sync()
    assert _condition(h, "Available")["reason"] == "MinimumReplicasUnavailable"


def test_metrics_report_budget_unavailable_count_and_forced_replacements() -> None:
    h = enforced("Parallel", maxUnavailable=2)
    _break_top(h, "nginx:crash")
    h.set_image("nginx:fixed")
    plan = h.sync()
    names = {m.name: m for m in plan.metrics}
    assert names["statefulset_max_unavailable"].value == 2
    # After this reconcile's deletions: broken foo-2 (replaced for free) and healthy foo-1 (within the budget).
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-2", "foo-1"]
    assert names["statefulset_unavailable_replicas"].value == 2
    assert names["statefulset_forced_pod_replacements_total"].kind == "counter"
    labels = dict(names["statefulset_max_unavailable"].labels)
    assert labels == {"namespace": "default", "statefulset": "foo", "pod_management_policy": "Parallel"}
    assert name_of(h.sts) == "foo"


def test_unavailability_violation_is_counted_once_per_breach() -> None:
    """KEP-961's counter: times replicas - availableReplicas > maxUnavailable was seen (a breach, not a reconcile)."""
    h = Harness(make_set(replicas=3))
    h.settle()
    counts = []
    for name in ("foo-1", "foo-2"):
        _crash(h, name)
    for _ in range(3):
        plan = h.sync()
        counts.append(sum(m.value for m in plan.metrics if m.name == "statefulset_unavailability_violation"))
    assert counts == [1, 0, 0]


_RECORD = '{"foo-0": {"revision": "%s", "count": COUNT}}'


@pytest.mark.parametrize("records", [
    "not json", "[" * 100_000, *(_RECORD.replace("COUNT", c) for c in ('"x"', "NaN", "1e999", "[1]", "1" + "0" * 30,
                                                                        "-3")),
    '{"foo-0": 5}', "[]",
], ids=["not JSON", "nested 100,000 deep", "a string count", "NaN", "infinity", "a list", "a huge count",
        "a negative count", "a record that is not an object", "a list of records"])
def test_a_mangled_progress_record_is_dropped_and_the_back_off_starts_over(records: str) -> None:
    h = _recreated_pending_under_a_progress_timeout()
    value = records % h.status()["updateRevision"] if "%s" in records else records
    h.patch_set({"metadata": {"annotations": {"rollwise.dev/progress-timeouts": value}}})
    h.now = 60.0
    assert not h.sync().of_type(DeletePod)
    h.now = 61.0
    assert h.sync().of_type(DeletePod), "the first timeout (60 s), as with no record"


def test_a_retried_pods_wait_says_how_often_it_was_replaced_and_when_the_next_try_is() -> None:
    h = _recreated_pending_under_a_progress_timeout()
    assert "replaced" not in _condition(h, "Progressing")["message"], "no retry yet: nothing to say"
    h.now = 65.0  # foo-0, created at 0, had 60 s: replaced; its successor, created at 65, gets 120 s
    h.sync()
    h.finish_termination("foo-0")
    h.sync()
    h.now = 66.0
    h.sync()
    message = _condition(h, "Progressing")["message"]
    assert message.endswith("; replaced 1 time, next try at 1970-01-01T00:03:05Z"), message
    h.now = 150.0
    h.sync()
    assert _condition(h, "Progressing")["message"] == message, "an unchanged world: the same message, no countdown"
