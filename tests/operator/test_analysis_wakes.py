"""The operator's AnalysisRun controller is woken through the one change dispatcher by the registration row's rule
(runtime/wakes.runs_to_wake), the one `up` follows: a run's own change wakes it, its deletion nothing, and a
template's change only the runs of its namespace still waiting to resolve their templates."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, cast

from rollwise.operator.analysis import AnalysisRunController
from rollwise.operator.feeds import informer_feed
from rollwise.operator.world import LoopCluster
from rollwise.runtime.cache import Store
from rollwise.runtime.clock import VirtualClock
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.queue import WorkQueue


def _run(name: str, namespace: str = "default", *, metrics: bool = False, phase: str | None = None) -> dict[str, Any]:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": "1"},
            "spec": {"templates": [{"templateName": "t"}], **({"metrics": [{"name": "m"}]} if metrics else {})},
            **({"status": {"phase": phase}} if phase else {})}


TEMPLATE = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisTemplate",
            "metadata": {"name": "t", "namespace": "default", "resourceVersion": "2"}, "spec": {"metrics": []}}


def _controller() -> tuple[ChangeDispatcher, Store, Store, WorkQueue[Hashable]]:
    runs, templates = Store("AnalysisRun"), Store("AnalysisTemplate")
    queue: WorkQueue[Hashable] = WorkQueue(VirtualClock())
    ctl = AnalysisRunController(world=cast(LoopCluster, None), runs=runs, templates=templates, queue=queue,
                                recorder=None, wall_time=lambda: 0.0, is_leader=lambda: True,
                                component="analysis-controller")
    changes = ChangeDispatcher()
    ctl.register(changes)
    return changes, runs, templates, queue


def _taken(queue: WorkQueue[Hashable]) -> set[Hashable]:
    out = set()
    while (key := queue.take()) is not None:
        out.add(key)
        queue.done(key)
    return out


def test_a_template_change_wakes_only_the_unresolved_unfinished_runs_of_its_namespace() -> None:
    changes, runs, templates, queue = _controller()
    for run in (_run("waiting"), _run("resolved", metrics=True), _run("done", phase="Successful"),
                _run("elsewhere", "other")):
        runs.apply("ADDED", run)
    delta = templates.apply("ADDED", TEMPLATE)
    assert delta is not None
    informer_feed(changes, "AnalysisTemplate", sets=False)(delta)
    assert _taken(queue) == {("default", "waiting")}


def test_a_runs_own_change_wakes_it_and_its_deletion_nothing() -> None:
    changes, runs, _, queue = _controller()
    on_run = informer_feed(changes, "AnalysisRun", sets=False)
    added = runs.apply("ADDED", _run("r"))
    assert added is not None
    on_run(added)
    assert _taken(queue) == {("default", "r")}
    deleted = runs.apply("DELETED", _run("r"))
    assert deleted is not None
    on_run(deleted)
    assert _taken(queue) == set()
