"""The custom kind's ``status.labelSelector`` and ``Ready`` condition (operator-plan §2), which ``kubectl scale``,
the HPA and ``kubectl wait --for=condition=Ready`` rely on; ``apps/v1`` status keeps upstream's shape."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_set
from harness import Harness

from rollwise.api.conditions import condition_of
from rollwise.api.meta import format_selector
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


STATUS = {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3,
          "currentRevision": "r2", "updateRevision": "r2"}


@pytest.mark.parametrize(("change", "partition", "ready"), [
    ({}, 0, "True"),
    ({"observedGeneration": 1}, 0, "False"),
    ({"updatedReplicas": 2}, 0, "False"),
    ({"updatedReplicas": 2, "currentRevision": "r1"}, 1, "False"),
    ({"readyReplicas": 2}, 0, "False"),
    ({"currentRevision": "r1"}, 0, "False"),
    ({"replicas": 4}, 0, "False"),
])
def test_ready_only_when_the_rollout_is_done(change: dict[str, Any], partition: int, ready: str) -> None:
    sts = _custom(strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": partition}})
    sts["metadata"]["generation"] = 2
    assert ready_condition(sts, {**STATUS, **change})["status"] == ready


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
