"""In-place image updates on `rollwise up` with the real kubectl, and through `rollwise run` (the operator) against
it: an image-only change keeps every pod (same uid, IP; restart count +1; no pod created or deleted, by the audit
log) within the budget; a mixed change recreates; InPlaceOnly halts on a mixed change with a condition naming the
pod and the field. Every process is started here and ended by its pid; every wait has a deadline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubectl_support import Up
from operator_support import (
    audit_entries,
    get_json,
    last_audit_time,
    leading_operator,
    pod_writes_since,
    running_up_for_operator,
)

pytestmark = pytest.mark.kubectl

CUSTOM = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {{name: web, namespace: default}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}
  updateStrategy: {{type: RollingUpdate, rollingUpdate: {{maxUnavailable: 1, podUpdatePolicy: {policy}}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec: {{containers: [{{name: app, image: "nginx:1.27"}}]}}
"""

APPS_V1 = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1, podUpdatePolicy: InPlaceIfPossible}}
  template:
    metadata: {labels: {app: db}}
    spec: {terminationGracePeriodSeconds: 5, containers: [{name: app, image: "nginx:1.27"}]}
"""

IMAGE = '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}'
MIXED = ('{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28",'
         '"env":[{"name":"MODE","value":"fast"}]}]}}}}')


def _pods(up: Up, app: str) -> dict[str, dict[str, object]]:
    return {p["metadata"]["name"]: {"uid": p["metadata"]["uid"], "ip": p["status"].get("podIP"),
                                    "image": p["spec"]["containers"][0]["image"],
                                    "restarts": sum(c.get("restartCount", 0)
                                                    for c in p["status"].get("containerStatuses") or ())}
            for p in get_json(up, "pods", "-l", f"app={app}")["items"]}


def _done(up: Up, resource: str, name: str, image: str) -> bool:
    sts = get_json(up, resource, name)
    status = sts.get("status") or {}
    pods = get_json(up, "pods", "-l", f"app={name}")["items"]
    return (status.get("observedGeneration") == sts["metadata"]["generation"] and status.get("updatedReplicas") == 3
            and status.get("availableReplicas") == 3 and status.get("currentRevision") == status.get("updateRevision")
            and len(pods) == 3 and all(p["spec"]["containers"][0]["image"] == image for p in pods)
            and all(not (p["metadata"].get("annotations") or {}).get("rollwise.dev/in-place-update") for p in pods))


def _in_place(up: Up, resource: str, name: str, change: list[str]) -> None:
    """Apply ``change`` (a kubectl command) and hold the in-place contract while the rollout runs."""
    up.until(lambda: _done(up, resource, name, "nginx:1.27"), "the set comes up")
    before = _pods(up, name)
    assert all(p["restarts"] == 0 for p in before.values())
    since = last_audit_time(up)
    watch = up.watch(resource, name, "-o", "custom-columns=AVAILABLE:.status.availableReplicas")
    try:
        watch.read_until(lambda lines: len(lines) >= 2)
        up.kubectl(*change)
        up.until(lambda: _done(up, resource, name, "nginx:1.28"), "the rollout completes in place")
        watch.read_until(lambda lines: lines[-1].strip() == "3" and len(lines) > 3)
    finally:
        watch.stop()
    available = [int(line) for line in watch.lines[1:] if line.strip().isdigit()]
    assert min(available) >= 2, f"maxUnavailable 1 held: {available}"
    after = _pods(up, name)
    assert {n: (p["uid"], p["ip"]) for n, p in after.items()} == {n: (p["uid"], p["ip"]) for n, p in before.items()}
    assert [p["restarts"] for p in after.values()] == [1, 1, 1]
    assert pod_writes_since(up, since) == [], "no pod created or deleted"


def test_kubectl_patch_of_a_custom_set_updates_every_pod_in_place(up: Up) -> None:
    up.apply(CUSTOM.format(policy="InPlaceIfPossible"))
    _in_place(up, "rsts", "web", ["patch", "rsts", "web", "--type=merge", "-p", IMAGE])
    events = up.kubectl("get", "events", "--field-selector", "reason=SuccessfulUpdatePodInPlace",
                        "-o", "json").stdout
    assert len(json.loads(events)["items"]) == 3


def test_kubectl_set_image_updates_an_apps_v1_set_in_place_as_a_lab_proposal(up: Up) -> None:
    applied = up.kubectl("apply", "-f", "-", stdin=APPS_V1)
    assert "podUpdatePolicy" in applied.stderr, "the proposal is named in a warning"
    _in_place(up, "sts", "db", ["set", "image", "statefulset/db", "app=nginx:1.28"])


def test_a_mixed_change_recreates_every_pod(up: Up) -> None:
    up.apply(CUSTOM.format(policy="InPlaceIfPossible"))
    up.until(lambda: _done(up, "rsts", "web", "nginx:1.27"), "the set comes up")
    before = _pods(up, "web")
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p", MIXED)
    up.until(lambda: _done(up, "rsts", "web", "nginx:1.28"), "the rollout completes by recreation")
    after = _pods(up, "web")
    assert not {p["uid"] for p in after.values()} & {p["uid"] for p in before.values()}


def test_in_place_only_halts_on_a_mixed_change_touching_no_pod(up: Up) -> None:
    up.apply(CUSTOM.format(policy="InPlaceOnly"))
    up.until(lambda: _done(up, "rsts", "web", "nginx:1.27"), "the set comes up")
    before = _pods(up, "web")
    since = last_audit_time(up)
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p", MIXED)

    def halted() -> bool:
        conditions = (get_json(up, "rsts", "web").get("status") or {}).get("conditions") or []
        return any(c["type"] == "Progressing" and c.get("reason") == "InPlaceUpdateImpossible" for c in conditions)

    up.until(halted, "the set reports the halt")
    message = next(c["message"] for c in get_json(up, "rsts", "web")["status"]["conditions"]
                   if c["type"] == "Progressing")
    assert "web-2" in message and "spec.template.spec.containers[0].env" in message
    assert _pods(up, "web") == before
    assert pod_writes_since(up, since, ("create", "update", "patch", "delete")) == []


def test_the_operator_updates_a_custom_set_in_place(tmp_path: Path) -> None:
    with running_up_for_operator(tmp_path) as server:
        server.install_rollwise()
        with leading_operator(server, tmp_path, "op-a"):
            server.apply(CUSTOM.format(policy="InPlaceIfPossible"))
            _in_place(server, "rsts", "web", ["patch", "rsts", "web", "--type=merge", "-p", IMAGE])
        updates = {e.get("name") for e in audit_entries(server)
                   if e["user"] == "op-a" and e["resource"] == "pods" and e["verb"] == "update"}
        assert updates == {"web-0", "web-1", "web-2"}, "the operator itself patched the images"
