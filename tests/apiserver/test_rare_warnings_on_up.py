"""A rollout's rare Warning reaches `kubectl get events` however busy the set was before it: on `rollwise up`, a
custom set scaled out to 53 pods and back (a hundred Normal events about it), then held by a pre-delete hook
that times out. client-go's spam filter (25 per object) would have dropped the Warning; rollwise's keeps a bucket
per reason (runtime/recorder.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubectl_support import HOOK, Up

pytestmark = pytest.mark.kubectl

BUSY = f"""\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {{name: web, namespace: default}}
spec:
  replicas: 3
  podManagementPolicy: Parallel
  selector: {{matchLabels: {{app: web}}}}
  lifecycle: {{preDelete: {{labelsHandler: {{{HOOK}: pending}}, timeoutSeconds: 1}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{terminationGracePeriodSeconds: 0, containers: [{{name: app, image: "nginx:1.27"}}]}}
"""


def _events(up: Up, *selector: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(up.kubectl("get", "events", *selector, "-o", "json").stdout)["items"]
    return [e for e in items if e["involvedObject"].get("kind") == "StatefulSet"
            and e["involvedObject"].get("name") == "web"]


def _ready(up: Up, replicas: int) -> bool:
    status = up.read("rsts", "web").get("status", {})
    return status.get("readyReplicas") == replicas and status.get("replicas") == replicas


def test_a_hook_timeout_warning_appears_after_a_hundred_normal_events_on_the_set(up: Up) -> None:
    up.install_crd()
    up.apply(BUSY)
    up.until(lambda: _ready(up, 3), "the set comes up")
    up.kubectl("scale", "rsts/web", "--replicas=53")
    up.until(lambda: _ready(up, 53), "50 more pods")
    up.kubectl("scale", "rsts/web", "--replicas=3")
    up.until(lambda: _ready(up, 3), "and back: the pods carry no hook label, so none waits")
    # 53 creates and 50 deletes were said about the set; the Events show each reason held to the spam filter's
    # burst of 25 (per-pod messages folded into one combined Event): the set's allowance is spent.
    counted: dict[str, int] = {}
    for e in _events(up):
        counted[e["reason"]] = counted.get(e["reason"], 0) + int(e.get("count") or 1)
    assert counted.get("SuccessfulCreate") == counted.get("SuccessfulDelete") == 25, counted

    up.kubectl("label", "pod", "web-2", f"{HOOK}=pending")  # the application's agent: not drained yet
    up.kubectl("scale", "rsts/web", "--replicas=2")
    up.until(lambda: bool(_events(up, "--field-selector", "reason=PreDeleteHookTimeout")),
             "the hook's timeout is reported as an Event")
    [warning] = _events(up, "--field-selector", "reason=PreDeleteHookTimeout")
    assert warning["type"] == "Warning" and "web-2" in warning["message"]
