"""Pre-delete hooks on `rollwise up`, driven by the real kubectl: the controller marks a hooked pod PreparingDelete
and deletes it only once the test — standing for the application's agent — removes the hook's label with
`kubectl label`; a timeout halts the rollout with a condition naming the pod and the hook; on apps/v1 the field is
a lab proposal kept with a warning."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubectl_support import HOOK, Up, hooked_set, statefulset

STATE = "rollwise.dev/lifecycle-state"
pytestmark = pytest.mark.kubectl


def _pods(up: Up, app: str) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in up.read("pods", "-l", f"app={app}")["items"]}


def _marked(up: Up, app: str) -> list[str]:
    return sorted(name for name, p in _pods(up, app).items()
                  if p["metadata"].get("labels", {}).get(STATE) == "PreparingDelete"
                  and not p["metadata"].get("deletionTimestamp"))


def _progressing(up: Up, kind: str, name: str) -> dict[str, Any]:
    conditions = up.read(kind, name).get("status", {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Progressing"), {})


def _replaced(up: Up, name: str, uid: str) -> bool:
    pod = _pods(up, "web").get(name)
    return pod is not None and pod["metadata"]["uid"] != uid and pod["spec"]["containers"][0]["image"] == "nginx:1.28"


def _ready(up: Up, kind: str, name: str, replicas: int) -> bool:
    status = up.read(kind, name).get("status", {})
    return status.get("readyReplicas") == replicas and status.get("updatedReplicas") == replicas


def test_a_rollout_waits_for_each_pods_agent_to_release_its_hook(up: Up) -> None:
    up.install_crd()
    up.apply(hooked_set())
    up.until(lambda: _ready(up, "rsts", "web", 3), "the set comes up")
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
               json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}}))
    released: list[str] = []
    for _ in range(3):
        up.until(lambda: len(_marked(up, "web")) == 1, "the controller marks the next pod PreparingDelete")
        [name] = _marked(up, "web")
        uid = _pods(up, "web")[name]["metadata"]["uid"]
        up.until(lambda: "pre-delete hook" in _progressing(up, "rsts", "web").get("message", ""),
                 "Progressing names the hook")
        assert f"waiting for {name} to be released by its pre-delete hook: still carries label {HOOK}=pending" in \
            _progressing(up, "rsts", "web")["message"]
        assert _pods(up, "web")[name]["metadata"]["uid"] == uid, "not deleted while the hook holds it"
        up.kubectl("label", "pod", name, f"{HOOK}-")  # the application's agent: drained
        released.append(name)
        up.until(lambda n=name, u=uid: _replaced(up, n, u), f"{name} is replaced once released")
    assert released == ["web-2", "web-1", "web-0"]
    up.until(lambda: _ready(up, "rsts", "web", 3), "the rollout completes")


def test_a_hook_that_is_never_released_halts_the_rollout_with_a_condition(up: Up) -> None:
    up.install_crd()
    up.apply(hooked_set(timeout=2))
    up.until(lambda: _ready(up, "rsts", "web", 3), "the set comes up")
    up.kubectl("scale", "rsts/web", "--replicas=2")
    up.until(lambda: _progressing(up, "rsts", "web").get("reason") == "PreDeleteHookTimeout", "the hook times out")
    condition = _progressing(up, "rsts", "web")
    assert condition["status"] == "False"
    assert f"web-2 still carries label {HOOK}=pending" in condition["message"]
    assert "web-2" in _pods(up, "web"), "never deleted silently"
    events = up.kubectl("get", "events", "--field-selector", "reason=PreDeleteHookTimeout", "-o", "json").stdout
    assert json.loads(events)["items"], "a Warning event says so too"
    up.kubectl("label", "pod", "web-2", f"{HOOK}-")
    up.until(lambda: "web-2" not in _pods(up, "web"), "released, the scale-in finishes")


def test_a_hook_on_apps_v1_is_a_proposal_up_keeps_with_a_warning(up: Up) -> None:
    assert up.kubectl("apply", "-f", "-", stdin=statefulset("db", image="nginx:1.26", replicas=2,
                                                            claims=False)).returncode == 0
    up.until(lambda: _ready(up, "sts", "db", 2), "the set comes up")
    patched = up.kubectl("patch", "sts", "db", "--type=merge", "-p", json.dumps({"spec": {"lifecycle": {
        "preDelete": {"labelsHandler": {HOOK: "pending"}}}}}))
    assert "spec.lifecycle: a Kubernetes 1.37.0 API server does not know the field" in patched.stderr
    for name in ("db-0", "db-1"):
        up.kubectl("label", "pod", name, f"{HOOK}=pending")  # the agent registers its hook on the running pods
    up.kubectl("set", "image", "sts/db", "app=nginx:1.27")
    up.until(lambda: _marked(up, "db") == ["db-1"], "db-1 is marked PreparingDelete")
    up.kubectl("label", "pod", "db-1", f"{HOOK}-")
    up.until(lambda: _marked(up, "db") == ["db-0"], "released, db-1 is replaced and db-0 marked")
    up.kubectl("label", "pod", "db-0", f"{HOOK}-")
    up.until(lambda: sorted(p["spec"]["containers"][0]["image"] for p in _pods(up, "db").values())
             == ["nginx:1.27"] * 2, "the rollout completes")
    bad = up.kubectl("patch", "sts", "db", "--type=merge", "-p",
                     json.dumps({"spec": {"lifecycle": {"preDelete": {"timeoutSeconds": 0}}}}), check=False)
    assert bad.returncode != 0 and "spec.lifecycle.preDelete" in bad.stderr
