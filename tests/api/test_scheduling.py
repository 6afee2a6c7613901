"""Where the scheduler may put a pod (api/scheduling.py), in kube-scheduler's filter plugins' words: cordons, taints
and tolerations, node selectors and required node affinity."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.api.scheduling import choose_node, node_rejects, tolerates, unschedulable_status

PREEMPTION = " preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."


def _node(name: str = "n1", *, labels: dict[str, str] | None = None, unschedulable: bool = False,
          taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"unschedulable": True} if unschedulable else {}
    if taints:
        spec["taints"] = taints
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def _pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


@pytest.mark.parametrize(("toleration", "taint", "expected"), [
    ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, {"key": "k", "value": "v",
                                                                             "effect": "NoSchedule"}, True),
    ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),  # Equal by default
    ({"key": "k", "value": "w"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
    ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
    ({"operator": "Exists"}, {"key": "any", "effect": "NoExecute"}, True),  # an empty key tolerates everything
    ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, {"key": "k", "effect": "NoSchedule"}, False),
], ids=["equal", "equal-by-default", "other-value", "exists", "empty-key-exists", "other-effect"])
def test_a_toleration_matches_a_taint_as_upstream_reads_it(toleration: dict[str, str], taint: dict[str, str],
                                                           expected: bool) -> None:
    assert tolerates([toleration], taint) is expected


def test_a_cordoned_node_takes_only_pods_that_tolerate_being_unschedulable() -> None:
    node = _node(unschedulable=True)
    assert node_rejects(_pod(), node) == "node(s) were unschedulable"
    tolerant = _pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                  "effect": "NoSchedule"}])
    assert node_rejects(tolerant, node) is None


def test_no_schedule_and_no_execute_taints_filter_prefer_no_schedule_does_not() -> None:
    node = _node(taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
    assert node_rejects(_pod(), node) == "node(s) had untolerated taint {dedicated: db}"
    assert node_rejects(_pod(), _node(taints=[{"key": "gpu", "effect": "NoExecute"}])) == \
        "node(s) had untolerated taint {gpu: }"
    assert node_rejects(_pod(), _node(taints=[{"key": "soft", "effect": "PreferNoSchedule"}])) is None


@pytest.mark.parametrize(("spec", "fits"), [
    ({"nodeSelector": {"disk": "ssd"}}, True),
    ({"nodeSelector": {"disk": "hdd"}}, False),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}}}, True),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]},
        {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]}]}}}}, True),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}}}}, False),
], ids=["selector-matches", "selector-differs", "affinity-in", "affinity-terms-are-ored", "affinity-exists"])
def test_node_selectors_and_required_affinity_must_match_the_node_s_labels(spec: dict[str, Any],
                                                                           fits: bool) -> None:
    node = _node(labels={"disk": "ssd", "zone": "a", "cores": "16"})
    assert (node_rejects(_pod(**spec), node) is None) is fits
    if not fits:
        assert node_rejects(_pod(**spec), node) == "node(s) didn't match Pod's node affinity/selector"


def test_the_pod_goes_to_the_node_with_fewest_pods_or_waits_with_upstream_s_message() -> None:
    nodes = [_node("a"), _node("b"), _node("c", unschedulable=True)]
    assert choose_node(_pod(), nodes, {"a": 3, "b": 1}) == ("b", "")
    nodes = [_node("a", unschedulable=True), _node("b", labels={"x": "y"}), _node("c", labels={"x": "y"})]
    node, message = choose_node(_pod(nodeSelector={"x": "z"}), nodes, {})
    assert node is None
    assert message == ("0/3 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 1 node(s) were "
                       "unschedulable." + PREEMPTION.format(n=3))
    assert choose_node(_pod(), [], {}) == (None, "0/0 nodes are available." + PREEMPTION.format(n=0))


def test_an_unschedulable_pod_keeps_its_transition_time_while_it_stays_so() -> None:
    first = unschedulable_status({"phase": "Pending"}, "m1", 10.0)
    assert first["conditions"] == [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                    "lastTransitionTime": 10.0, "reason": "Unschedulable", "message": "m1"}]
    again = unschedulable_status(first, "m2", 20.0)
    assert (again["conditions"][0]["lastTransitionTime"], again["conditions"][0]["message"]) == (10.0, "m2")
