"""Table printers: kubectl's pod STATUS rules and AGE wording, printer columns from a CRD."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.apiserver.kinds.printers import columns_for, human_duration, pod_status
from rollwise.apiserver.kinds.resources import Registry


def _pod(*statuses: dict[str, Any], phase: str = "Running", deleting: bool = False,
         init: tuple[dict[str, Any], ...] = (), reason: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p"}
    if deleting:
        meta["deletionTimestamp"] = 5.0
    status: dict[str, Any] = {"phase": phase, "containerStatuses": list(statuses)}
    if init:
        status["initContainerStatuses"] = list(init)
    if reason:
        status["reason"] = reason
    return {"metadata": meta, "spec": {"containers": [{"name": s.get("name", "c")} for s in statuses] or [{}],
                                        "initContainers": [{"name": "i"}] * len(init)}, "status": status}


def _c(state: dict[str, Any], *, ready: bool = False, restarts: int = 0, name: str = "c") -> dict[str, Any]:
    return {"name": name, "state": state, "ready": ready, "restartCount": restarts}


CASES = [
    ("running and ready", _pod(_c({"running": {}}, ready=True)), ("Running", 1, 1, 0)),
    ("creating", _pod(_c({"waiting": {"reason": "ContainerCreating"}}), phase="Pending"),
     ("ContainerCreating", 0, 1, 0)),
    ("image pull back-off", _pod(_c({"waiting": {"reason": "ImagePullBackOff"}}), phase="Pending"),
     ("ImagePullBackOff", 0, 1, 0)),
    ("crash loop counts restarts", _pod(_c({"waiting": {"reason": "CrashLoopBackOff"}}, restarts=3)),
     ("CrashLoopBackOff", 0, 1, 3)),
    ("terminated with a reason", _pod(_c({"terminated": {"reason": "Error", "exitCode": 1}}), phase="Failed"),
     ("Error", 0, 1, 0)),
    ("terminated without a reason shows the exit code", _pod(_c({"terminated": {"exitCode": 2}})),
     ("ExitCode:2", 0, 1, 0)),
    ("completed but another container runs", _pod(_c({"running": {}}, ready=True, name="a"),
                                                  _c({"terminated": {"reason": "Completed", "exitCode": 0}},
                                                     name="b")), ("NotReady", 1, 2, 0)),
    ("terminating wins", _pod(_c({"running": {}}, ready=True), deleting=True), ("Terminating", 1, 1, 0)),
    ("a deleted pod that completed shows it, not Terminating",
     _pod(_c({"terminated": {"reason": "Completed", "exitCode": 0}}), phase="Succeeded", deleting=True),
     ("Completed", 0, 1, 0)),
    ("a deleted pod that was killed shows its error",
     _pod(_c({"terminated": {"reason": "Error", "exitCode": 137}}), phase="Failed", deleting=True),
     ("Error", 0, 1, 0)),
    ("init container progress", _pod(_c({"waiting": {"reason": "PodInitializing"}}), phase="Pending",
                                     init=(_c({"running": {}}, name="i"),)), ("Init:0/1", 0, 1, 0)),
    ("init container failing", _pod(_c({"waiting": {}}), phase="Pending",
                                    init=(_c({"waiting": {"reason": "CrashLoopBackOff"}}, name="i"),)),
     ("Init:CrashLoopBackOff", 0, 1, 0)),
    ("pod reason overrides the phase", _pod(_c({"running": {}}), phase="Failed", reason="Evicted"),
     ("Evicted", 0, 1, 0)),
]


@pytest.mark.parametrize(("pod", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pod_status_follows_kubectl_rules(pod: dict[str, Any], expected: tuple[str, int, int, int]) -> None:
    assert pod_status(pod)[:4] == expected


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (119, "119s"), (125, "2m5s"), (600, "10m"), (3 * 3600 + 60, "3h1m"), (10 * 3600, "10h"),
    (3 * 86400 + 3600, "3d1h"), (30 * 86400, "30d"), (-0.5, "0s"), (-5, "<invalid>")])
def test_age_is_worded_as_kubectl_words_it(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_a_crd_printer_columns_drive_its_table() -> None:
    registry = Registry()
    registry.define({"metadata": {"name": "widgets.example.dev"}, "spec": {
        "group": "example.dev", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                      "additionalPrinterColumns": [
                          {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                          {"name": "Parts", "type": "string", "jsonPath": ".spec.parts[*].name"},
                          {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}})
    widget = registry.find("example.dev", "v1", "widgets")
    assert widget is not None and widget.status and not widget.scale
    columns, row = columns_for(widget)
    assert [c["name"] for c in columns] == ["Name", "Size", "Parts", "Age"]
    obj = {"metadata": {"name": "w", "creationTimestamp": 100.0},
           "spec": {"size": 3, "parts": [{"name": "a"}, {"name": "b"}]}}
    assert row(obj, 160.0) == ["w", 3, "a,b", "60s"]
