"""The one change dispatcher (runtime/dispatch.py): drivers register their hosts, feed it each change they read, and
it asks the registration table's rules once and wakes the hosts that own the keys."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import ANALYSIS_RUN, ROLLWISE_STATEFULSET, STATEFULSET
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.runtime import dispatch
from rollwise.runtime.dispatch import ChangeDispatcher
from rollwise.runtime.registrations import ANALYSIS
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.wakes import ObjectKey

SRC = Path(__file__).resolve().parents[2] / "src" / "rollwise"


class _Sets:
    def __init__(self, *sets: Obj) -> None:
        self.sets = list(sets)

    def sets_in(self, namespace: str) -> list[Obj]:
        return [s for s in self.sets if s["metadata"]["namespace"] == namespace]

    def find(self, namespace: str, name: str) -> Obj | None:
        return next((s for s in self.sets_in(namespace) if s["metadata"]["name"] == name), None)


def _set(api_version: str, name: str) -> Obj:
    return {"apiVersion": api_version, "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": name}}}}


def _change(kind: str, obj: Obj, *, group: str = "", type_: Any = "ADDED") -> Change:
    return Change(type=type_, kind=kind, namespace="default", name=obj["metadata"]["name"], obj=obj, old=None,
                  actor="user", at=0.0, group=group)


BUDGET = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "default"}}
RUN = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
       "metadata": {"name": "r", "namespace": "default"}, "spec": {}}


def test_each_host_gets_the_keys_of_its_kinds_and_one_lookup_is_asked_once(monkeypatch: Any) -> None:
    asked: list[object] = []
    real = dispatch.sets_woken

    def counting(sets: Any, ch: Change) -> list[SetKey]:
        asked.append(sets)
        return real(sets, ch)

    monkeypatch.setattr(dispatch, "sets_woken", counting)
    store = _Sets(_set("apps/v1", "a"), _set("apps.rollwise.dev/v1alpha1", "b"))
    woken: dict[str, list[SetKey]] = {"apps": [], "custom": []}
    changes = ChangeDispatcher()
    changes.add_sets(store, woken["apps"].append, kinds=(STATEFULSET,))
    changes.add_sets(store, woken["custom"].append, kinds=(ROLLWISE_STATEFULSET,))
    changes.dispatch(_change("PodDisruptionBudget", BUDGET, group="policy"))
    assert asked == [store], "one answer of the rule for the hosts sharing a lookup"
    assert woken == {"apps": [(STATEFULSET, "default", "a")], "custom": [(ROLLWISE_STATEFULSET, "default", "b")]}


def test_hosts_of_separate_lookups_each_see_the_sets_of_their_own() -> None:
    woken: list[SetKey] = []
    changes = ChangeDispatcher()
    changes.add_sets(_Sets(_set("apps/v1", "a")), woken.append)
    changes.add_sets(_Sets(_set("apps.rollwise.dev/v1alpha1", "b")), woken.append)
    changes.dispatch(_change("PodDisruptionBudget", BUDGET, group="policy"))
    assert woken == [(STATEFULSET, "default", "a"), (ROLLWISE_STATEFULSET, "default", "b")]


def test_an_object_controller_is_woken_by_its_rows_rule_and_a_feed_reaches_only_the_hosts_it_names() -> None:
    objects: list[ObjectKey] = []
    sets: list[SetKey] = []
    changes = ChangeDispatcher()
    changes.add_objects(ANALYSIS, MemoryCluster(clock=lambda: 0.0), objects.extend)
    changes.add_sets(_Sets(), sets.append)
    run = _change("AnalysisRun", RUN, group="apps.rollwise.dev")
    changes.dispatch(run, objects=False)
    assert objects == []
    changes.dispatch(run, sets=False)
    assert objects == [(ANALYSIS_RUN, "default", "r")]


def test_no_driver_asks_a_wake_rule_but_the_dispatcher() -> None:
    askers = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                    if re.search(r"(?<!def )\bsets_woken\(|\.woken_by\(", p.read_text(encoding="utf-8")))
    assert askers == ["runtime/dispatch.py"]
