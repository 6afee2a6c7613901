"""Pre-delete hooks (spec.lifecycle.preDelete): a hooked pod is marked PreparingDelete and deleted only once its
agent releases it, under every strategy and on scale-in; a marked pod counts unavailable; a timeout halts the
rollout naming the pod and the hook, deleting nothing; a Failed pod is replaced regardless."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import make_set
from harness import Harness

from rollwise.api.lifecycle import LIFECYCLE_STATE_LABEL, PREPARING_DELETE, check_lifecycle, hook_held
from rollwise.api.lifecycle import pre_delete_hook as hook_of
from rollwise.api.meta import name_of
from rollwise.api.predicates import is_terminating
from rollwise.controllers.plan import ClearPreparingDelete, DeletePod, MarkPreparingDelete, WriteStatus

HOOK_LABEL = "example.com/drain"
STRATEGIES = [
    {"type": "RollingUpdate"},
    {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
    {"type": "EnforcedRollingUpdate"},
    {"type": "Recreate"},
]


def _hooked(policy: str = "OrderedReady", *, strategy: dict[str, Any] | None = None, replicas: int = 3,
            finalizers: bool = False, timeout: int | None = None) -> Harness:
    sts = make_set(replicas=replicas, policy=policy, strategy=strategy or {"type": "RollingUpdate"})
    pre: dict[str, Any] = {"labelsHandler": {HOOK_LABEL: "pending"}}
    if finalizers:
        pre["finalizersHandler"] = ["example.com/drain"]
    if timeout is not None:
        pre["timeoutSeconds"] = timeout
    sts["spec"]["lifecycle"] = {"preDelete": pre}
    sts["spec"]["template"]["metadata"]["labels"][HOOK_LABEL] = "pending"
    h = Harness(sts)
    h.settle()
    if finalizers:
        for pod in h.pods():
            h.cluster.patch("Pod", "default", name_of(pod), {"metadata": {"finalizers": ["example.com/drain"]}})
    return h


def _release(h: Harness, name: str) -> None:
    """The application's agent: it drained the pod, and removes the hook's label and finalizer."""
    h.cluster.patch("Pod", "default", name, {"metadata": {"labels": {HOOK_LABEL: None}, "finalizers": None}})


def _progressing(h: Harness) -> dict[str, Any]:
    return next(c for c in h.status()["conditions"] if c["type"] == "Progressing")


def _marked(h: Harness) -> list[str]:
    return [name_of(p) for p in h.pods() if (p["metadata"].get("labels") or {}).get(LIFECYCLE_STATE_LABEL)
            == PREPARING_DELETE and not is_terminating(p)]


def _drive(h: Harness, syncs: int = 200) -> list[str]:
    """Sync and step pods; the agent releases each marked pod one sync after the mark. Checks on every sync that no
    pod is deleted while it carries the hook. Returns the pods deleted, in order."""
    deleted: list[str] = []
    pending: list[str] = []
    for _ in range(syncs):
        before = {name_of(p): p for p in h.pods()}
        plan = h.sync()
        for d in plan.of_type(DeletePod):
            assert not hook_held(hook_of(h.sts), before[d.name]), f"{d.name} deleted while hooked"
            deleted.append(d.name)
        for name in pending:
            if name in {name_of(p) for p in h.pods()}:
                _release(h, name)
        pending = _marked(h)
        h.step_pods()
        if not plan.actions and not pending and all(not is_terminating(p) for p in h.pods()) and \
                set(h.images().values()) == {"nginx:2"} and len(h.pods()) == h.sts["spec"]["replicas"]:
            break
    return deleted


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s["type"] + str(s.get("rollingUpdate", "")))
@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_every_strategy_marks_a_hooked_pod_and_deletes_it_only_once_released(policy: str,
                                                                             strategy: dict[str, Any]) -> None:
    h = _hooked(policy, strategy=strategy)
    h.set_image("nginx:2")
    plan = h.sync()
    marks = plan.of_type(MarkPreparingDelete)
    assert marks and not plan.of_type(DeletePod)
    assert _marked(h) == sorted(m.name for m in marks)
    # Held: nothing is deleted however often the controller looks.
    for _ in range(3):
        assert not h.sync().of_type(DeletePod)
    deleted = _drive(h)
    assert sorted(set(deleted)) == ["foo-0", "foo-1", "foo-2"]
    assert set(h.images().values()) == {"nginx:2"}


def test_the_wait_names_the_pod_and_what_it_still_carries() -> None:
    h = _hooked(finalizers=True)
    h.set_image("nginx:2")
    h.sync()
    h.now = 7.0
    plan = h.plan()
    waits = [str(b) for b in plan.blocked]
    assert waits[0] == ("waiting for foo-2 to be released by its pre-delete hook: still carries label "
                        "example.com/drain=pending, finalizer example.com/drain "
                        "(PreparingDelete since 1970-01-01T00:00:00Z)")
    h.sync()
    assert "to be released by its pre-delete hook" in _progressing(h)["message"]
    assert any(e.startswith("PreparingDelete: pod foo-2") for e in h.events)


def test_a_pending_hook_writes_the_status_once_however_long_it_waits() -> None:
    h = _hooked()
    h.set_image("nginx:2")
    h.sync()
    h.now = 3.0
    h.sync()
    for later in (3.5, 4.0, 61.0, 3600.0):
        h.now = later
        assert not h.sync().of_type(WriteStatus), f"a write at t={later}: nothing changed but the clock"


def test_a_marked_pod_counts_unavailable_so_the_budget_marks_no_more() -> None:
    h = _hooked("Parallel", strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}})
    h.set_image("nginx:2")
    assert [m.name for m in h.sync().of_type(MarkPreparingDelete)] == ["foo-2", "foo-1"]
    assert not h.sync().of_type(MarkPreparingDelete)
    _release(h, "foo-2")
    plan = h.sync()
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-2"] and not plan.of_type(MarkPreparingDelete)


def test_an_unhooked_pod_is_deleted_at_once() -> None:
    h = _hooked()
    _release(h, "foo-2")
    h.set_image("nginx:2")
    plan = h.sync()
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-2"] and not plan.of_type(MarkPreparingDelete)


def test_a_scale_in_waits_for_the_hook() -> None:
    h = _hooked()
    h.patch_set({"spec": {"replicas": 2}})
    assert [m.name for m in h.sync().of_type(MarkPreparingDelete)] == ["foo-2"]
    assert not h.sync().of_type(DeletePod)
    _release(h, "foo-2")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-2"]


def test_a_timeout_halts_the_rollout_naming_the_pod_and_the_hook_and_deletes_nothing() -> None:
    h = _hooked(timeout=30)
    h.set_image("nginx:2")
    h.sync()
    h.now = 29.0
    assert h.sync().requeue_after == pytest.approx(1.0)
    h.now = 31.0
    plan = h.sync()
    assert not plan.of_type(DeletePod) and not plan.of_type(MarkPreparingDelete)
    progressing = _progressing(h)
    assert (progressing["status"], progressing["reason"]) == ("False", "PreDeleteHookTimeout")
    assert ("foo-2 still carries label example.com/drain=pending: marked PreparingDelete at 1970-01-01T00:00:00Z, "
            "timeoutSeconds (30) passed at 1970-01-01T00:00:30Z") in progressing["message"]
    h.now = 45.0
    assert not h.sync().of_type(WriteStatus), "the halt's message names moments: it reads the same later"
    assert any(e.startswith("PreDeleteHookTimeout") for e in h.events)
    h.now = 500.0
    assert not h.sync().of_type(DeletePod)
    _release(h, "foo-2")  # the agent comes back: the pod goes and the rollout goes on
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-2"]


def test_a_failed_marked_pod_is_replaced_without_the_hook() -> None:
    h = _hooked()
    h.set_image("nginx:2")
    h.sync()
    h.set_status("foo-2", phase="Failed")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-2"]


def test_a_failed_pod_is_replaced_though_it_carries_the_hook() -> None:
    h = _hooked()
    h.set_status("foo-1", phase="Failed")
    plan = h.sync()
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-1"] and not plan.of_type(MarkPreparingDelete)


def test_a_marked_pod_goes_once_released_even_after_a_pause() -> None:
    h = _hooked()
    h.set_image("nginx:2")
    h.sync()
    h.patch_set({"spec": {"paused": True}})
    _release(h, "foo-2")
    assert [d.name for d in h.sync().of_type(DeletePod)] == ["foo-2"]


def test_the_status_counts_a_marked_pod_as_the_pod_it_still_is() -> None:
    h = _hooked()
    before = copy.deepcopy(h.status())
    h.set_image("nginx:2")
    h.sync()
    assert h.status()["replicas"] == before["replicas"] == 3
    assert h.status()["currentReplicas"] == 3 and h.status()["readyReplicas"] == 3  # foo-2 still runs


@pytest.mark.parametrize(("lifecycle", "path", "rule"), [
    ({"preDelete": {}}, "spec.lifecycle.preDelete", "must name at least one label"),
    ({"preDelete": {"labelsHandler": {"bad key!": "x"}}}, "spec.lifecycle.preDelete.labelsHandler", "name part"),
    ({"preDelete": {"labelsHandler": {LIFECYCLE_STATE_LABEL: "x"}}}, "spec.lifecycle.preDelete.labelsHandler",
     "lifecycle-state"),
    ({"preDelete": {"finalizersHandler": ["a/b", "a/b"]}}, "spec.lifecycle.preDelete.finalizersHandler[1]",
     "unique"),
    ({"preDelete": {"finalizersHandler": "a/b"}}, "spec.lifecycle.preDelete.finalizersHandler", "a list"),
    ({"preDelete": {"labelsHandler": {"a": "b"}, "timeoutSeconds": 0}}, "spec.lifecycle.preDelete.timeoutSeconds",
     "greater than 0"),
    ({"preStop": {}}, "spec.lifecycle.preStop", "unknown field"),
    ("x", "spec.lifecycle", "mapping"),
])
def test_a_malformed_hook_is_refused_with_its_field_path(lifecycle: Any, path: str, rule: str) -> None:
    errors = check_lifecycle(lifecycle)
    assert any(e.path == path and rule in str(e) for e in errors), [str(e) for e in errors]


def test_a_marked_pod_the_partition_now_covers_is_cleared_not_deleted() -> None:
    h = _hooked(strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    h.set_image("nginx:2")
    h.sync()
    h.patch_set({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 3}}}})
    _release(h, "foo-2")
    plan = h.sync()
    assert not plan.of_type(DeletePod)
    assert [a.name for a in plan.of_type(ClearPreparingDelete)] == ["foo-2"] and _marked(h) == []


def test_a_scale_in_undone_clears_the_mark() -> None:
    h = _hooked()
    h.patch_set({"spec": {"replicas": 2}})
    h.sync()
    h.patch_set({"spec": {"replicas": 3}})
    plan = h.sync()
    assert [a.name for a in plan.of_type(ClearPreparingDelete)] == ["foo-2"] and not plan.of_type(DeletePod)


def test_a_hook_whose_labels_no_template_gives_warns_with_each_deletion_it_does_not_hold() -> None:
    sts = make_set(replicas=3, strategy={"type": "RollingUpdate"})
    sts["spec"]["lifecycle"] = {"preDelete": {"labelsHandler": {HOOK_LABEL: "pending"}}}  # the template lacks it
    h = Harness(sts)
    h.settle()
    assert not [e for e in h.events if e.startswith("PreDeleteHookUnused")], "nothing deleted yet: nothing said"
    h.set_image("nginx:2")
    plan = h.sync()
    assert [d.name for d in plan.of_type(DeletePod)] == ["foo-2"]
    [warning] = [e for e in h.events if e.startswith("PreDeleteHookUnused")]
    assert warning == ("PreDeleteHookUnused: foo-2 deleted without waiting: no pod of spec.template carries "
                       "example.com/drain=pending: each is deleted without waiting unless something labels it first "
                       "(add the label to spec.template.metadata.labels to hook every pod from its start)")
    h.sync()
    assert len([e for e in h.events if e.startswith("PreDeleteHookUnused")]) == 1, "said with a deletion, not again"


def test_a_pod_its_agent_released_early_is_deleted_without_a_warning() -> None:
    h = _hooked()
    _release(h, "foo-2")
    h.set_image("nginx:2")
    h.sync()
    assert not [e for e in h.events if e.startswith("PreDeleteHookUnused")], "the template hooks every pod"
