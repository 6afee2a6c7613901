"""The custom kind's ``status.labelSelector`` and ``Ready`` condition (operator-plan §2), which ``kubectl scale``,
the HPA and ``kubectl wait --for=condition=Ready`` rely on; ``apps/v1`` status keeps upstream's shape."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_set
from harness import Harness

from rollwise.api.conditions import condition_of
from rollwise.api.meta import format_selector
from rollwise.api.rollout import status_progress
from rollwise.cli.rollout import status_message
from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.statefulset.readiness import ready_condition
from rollwise.runtime.execute import execute
from rollwise.runtime.views import set_view


def _custom(**kw: Any) -> dict[str, Any]:
    return {**make_set(**kw), "apiVersion": "apps.rollwise.dev/v1alpha1"}


@pytest.mark.parametrize(("selector", "text"), [
    ({"matchLabels": {"app": "web"}}, "app=web"),
    ({"matchLabels": {"z": "1", "a": "2"}}, "a=2,z=1"),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]}, "tier in (a,b)"),
    ({"matchExpressions": [{"key": "x", "operator": "NotIn", "values": ["1"]},
                           {"key": "w", "operator": "Exists"}, {"key": "v", "operator": "DoesNotExist"}]},
     "!v,w,x notin (1)"),
    ({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "role", "operator": "Exists"}]}, "app=web,role"),
])
def test_selector_is_written_in_apimachinery_string_form(selector: dict[str, Any], text: str) -> None:
    assert format_selector(selector) == text


@pytest.mark.parametrize(("progressing", "ready"), [
    ({"status": "True", "reason": "PartitionRolledOut"}, ("True", "PartitionRolledOut")),
    ({"status": "True", "reason": "RolloutInProgress"}, ("False", "RolloutInProgress")),
    ({"status": "False", "reason": "ProgressDeadlineExceeded"}, ("False", "ProgressDeadlineExceeded")),
    ({"status": "False", "reason": "SafetyHalt"}, ("False", "SafetyHalt")),
])
def test_ready_follows_progressing_and_keeps_its_reason(progressing: dict[str, Any], ready: tuple[str, str]) -> None:
    condition = ready_condition({"type": "Progressing", "message": "m", **progressing}, {})
    assert (condition["status"], condition["reason"], condition["message"]) == (*ready, "m")


@pytest.mark.parametrize("reason", ["RolloutComplete", "RecreateComplete"])
def test_ready_says_rollout_complete_whatever_the_strategy(reason: str) -> None:
    condition = ready_condition({"type": "Progressing", "status": "True", "reason": reason, "message": "m"},
                                {"replicas": 3, "updateRevision": "web-b"})
    assert condition == {"type": "Ready", "status": "True", "reason": "RolloutComplete",
                         "message": "3 replicas ready at revision web-b"}


class CustomHarness(Harness):
    """The harness's store keys sets by kind alone; the controller sees the set as the custom kind."""

    def sync(self) -> Plan:
        sts = self.sts
        view = set_view(self.cluster, {**sts, "apiVersion": "apps.rollwise.dev/v1alpha1"}, now=self.now,
                        gates=self.gates)
        plan = reconcile(view)
        self.last = execute(plan, self.cluster, sts=sts, actor="statefulset-controller")
        return plan


def test_custom_set_reports_selector_and_ready_with_observed_generation_through_a_rollout() -> None:
    h = CustomHarness(make_set(replicas=2))
    h.settle()
    status = h.status()
    assert status["labelSelector"] == "foo=bar"
    ready = condition_of(status["conditions"], "Ready")
    assert ready is not None and ready["status"] == "True"
    assert all(c["observedGeneration"] == h.sts["metadata"]["generation"] for c in status["conditions"])
    h.set_image("nginx:2")
    h.sync()
    ready = condition_of(h.status()["conditions"], "Ready")
    assert ready is not None and ready["status"] == "False" and ready["observedGeneration"] == \
        h.sts["metadata"]["generation"]
    h.settle()
    ready = condition_of(h.status()["conditions"], "Ready")
    assert ready is not None and ready["status"] == "True"


def test_apps_v1_status_keeps_upstream_shape() -> None:
    h = Harness(make_set(replicas=2))
    h.settle()
    status = h.status()
    assert "labelSelector" not in status
    assert condition_of(status.get("conditions") or [], "Ready") is None
    assert all("observedGeneration" not in c for c in status.get("conditions") or [])


STRATEGIES = {
    "RollingUpdate": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
    "RollingUpdate-partition": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
    "EnforcedRollingUpdate-partition": {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 1}},
    "Recreate": {"type": "Recreate"},
    "OnDelete": {"type": "OnDelete"},
}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_rollout_status_and_ready_agree_at_every_step_of_a_rollout(name: str, policy: str) -> None:
    h = CustomHarness(make_set(replicas=3, policy=policy, updateStrategy=STRATEGIES[name], minReadySeconds=5))
    h.settle()
    h.set_image("nginx:2")
    seen = []
    for step in range(60):
        h.now = float(step)
        h.sync()
        sts = {**h.sts, "apiVersion": "apps.rollwise.dev/v1alpha1"}
        ready = condition_of(h.status()["conditions"], "Ready")
        assert ready is not None
        line, done = status_message(sts)
        assert done == (ready["status"] == "True"), (step, line, ready)
        assert done == status_progress(sts).done, (step, line, "the counters' form of the rule agrees")
        seen.append(done)
        if name == "OnDelete":  # a person deletes the outdated pods, one per step
            outdated = [p for p in h.pods() if p["spec"]["containers"][0]["image"] != "nginx:2"
                        and p["metadata"].get("deletionTimestamp") is None]
            if outdated:
                h.cluster.delete("Pod", "default", outdated[-1]["metadata"]["name"])
        h.step_pods()
    assert seen[-1] is True and seen.count(False) >= 1
    progressing = condition_of(h.status()["conditions"], "Progressing")
    assert progressing is not None
    if name.endswith("-partition"):
        assert progressing["reason"] == "PartitionRolledOut"
        assert "until the partition is lowered" in progressing["message"]
