"""A deleted pod on ``rollwise up`` stops as on a cluster (kubelet/termination.py): its containers terminate, it turns
not Ready and reaches a terminal phase before it is removed, and a finalizer keeps the object, not its containers.
Driven with the real kubectl and with lightkube."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up
from lightkube import Client, KubeConfig
from lightkube.resources.core_v1 import Pod

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(shared=True),
]


def _pod(name: str, *finalizers: str) -> str:
    meta: dict[str, Any] = {"name": name}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                       "spec": {"containers": [{"name": "app", "image": "nginx:1.27"},
                                               {"name": "side", "image": "busybox:1.36"}]}})


def _ready(pod: dict[str, Any]) -> str:
    return next((c["status"] for c in (pod.get("status") or {}).get("conditions") or () if c["type"] == "Ready"), "")


def _running_and_ready(up: Up, name: str) -> None:
    up.kubectl("wait", "--for=condition=Ready", f"pod/{name}", "--timeout=60s")


def test_a_finalizer_held_deleted_pod_has_its_containers_stopped_and_is_not_ready(up: Up) -> None:
    up.apply(_pod("held", "example.com/hold"))
    _running_and_ready(up, "held")
    up.kubectl("delete", "pod", "held", "--wait=false")  # the default grace period, 30 s
    done = up.kubectl("wait", "--for=condition=Ready=false", "pod/held", "--timeout=60s", check=False)
    assert done.returncode == 0, done.stderr
    up.until(lambda: up.read("pod", "held")["status"]["phase"] == "Succeeded", "the held pod turns Succeeded")
    pod = up.read("pod", "held")
    assert pod["metadata"]["deletionTimestamp"] and pod["metadata"]["finalizers"] == ["example.com/hold"]
    states = [cs["state"] for cs in pod["status"]["containerStatuses"]]
    assert [s["terminated"]["exitCode"] for s in states] == [0, 0]
    assert {s["terminated"]["reason"] for s in states} == {"Completed"}
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")
    shown = up.kubectl("get", "pod", "held", "--no-headers").stdout.split()
    assert shown[1:3] == ["0/2", "Completed"], shown  # a terminal pod shows how it ended, not Terminating
    up.kubectl("patch", "pod", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    up.kubectl("wait", "--for=delete", "pod/held", "--timeout=60s")


def test_a_deleted_pod_is_seen_stopped_and_terminal_before_it_goes_by_a_lightkube_watch(up: Up) -> None:
    client = Client(KubeConfig.from_file(up.kubeconfig), field_manager="termination-test", trust_env=False)
    up.apply(_pod("goes"))
    _running_and_ready(up, "goes")
    version = client.get(Pod, "goes", namespace="default").metadata.resourceVersion
    up.kubectl("delete", "pod", "goes", "--wait=false")
    seen: list[tuple[str, str, str, list[str]]] = []
    for kind, pod in client.watch(Pod, namespace="default", fields={"metadata.name": "goes"},
                                  resource_version=version):
        status = pod.to_dict().get("status") or {}
        states = [next(iter(cs.get("state") or {"": 0})) for cs in status.get("containerStatuses") or ()]
        seen.append((kind, status.get("phase", ""), _ready(pod.to_dict()), states))
        if kind == "DELETED":
            break
    terminal = [s for s in seen if s[0] == "MODIFIED" and s[1] == "Succeeded"]
    assert terminal, seen
    assert terminal[0][2:] == ("False", ["terminated", "terminated"]), seen
    assert seen.index(terminal[0]) < len(seen) - 1 and seen[-1][0] == "DELETED"
    assert all(s[2] == "True" for s in seen[:seen.index(terminal[0])] if s[1] == "Running" and "terminated" not in s[3])


def test_removing_the_finalizer_of_a_stopped_pod_lets_it_go_at_once(up: Up, tmp_path: Path) -> None:
    up.apply(_pod("late", "example.com/hold"))
    _running_and_ready(up, "late")
    up.kubectl("delete", "pod", "late", "--wait=false", "--grace-period=5")
    up.kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/late", "--timeout=60s")
    up.kubectl("patch", "pod", "late", "--type=json", "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    up.kubectl("wait", "--for=delete", "pod/late", "--timeout=60s")
