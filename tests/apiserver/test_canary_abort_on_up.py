"""Aborting a canary on `rollwise up` with the real operator process (`rollwise run`), the real kubectl and the
plugin: a 4-replica custom set with steps ``[{replicas: 2}, {pause: {}}]`` held at the pause, then ``kubectl
rollwise rollout abort``: the two updated pods return to the stable revision with their claims, the other two are
untouched, ``rollwise status`` fails with RolloutAborted; ``retry`` starts the steps again. Every process is started
here and ended by its pid; every wait has a deadline."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zygote
from kubectl_support import DEADLINE, PLUGIN_DIR, Up
from operator_support import get_json, leading_operator, rolled_out, running_up_for_operator

pytestmark = pytest.mark.kubectl

CANARY = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      steps: [{replicas: 2}, {pause: {}}]
  template:
    metadata: {labels: {app: web}}
    spec: {terminationGracePeriodSeconds: 1, containers: [{name: app, image: "nginx:1.27"}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""
IMAGE = '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}'


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    if not (PLUGIN_DIR / "kubectl-rollwise").exists():
        pytest.skip("the kubectl-rollwise entry point is not installed (run `make setup`)")
    with running_up_for_operator(tmp_path) as server:
        server.env = {**server.env, "PATH": f"{PLUGIN_DIR}{os.pathsep}{server.env.get('PATH', os.environ['PATH'])}"}
        server.install_rollwise()
        yield server


def _status(up: Up) -> dict[str, Any]:
    return get_json(up, "rsts", "web").get("status") or {}


def _pods(up: Up) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in get_json(up, "pods", "-l", "app=web")["items"]
            if not p["metadata"].get("deletionTimestamp")}


def _revisions(up: Up) -> dict[str, str]:
    return {name: p["metadata"]["labels"].get("controller-revision-hash", "") for name, p in _pods(up).items()}


def _claim_uids(up: Up) -> dict[str, str]:
    return {c["metadata"]["name"]: c["metadata"]["uid"] for c in get_json(up, "pvc")["items"]}


def _ready(up: Up) -> bool:
    return _status(up).get("readyReplicas") == 4


def test_an_abort_takes_the_two_updated_pods_back_with_their_claims_and_status_fails(up: Up, tmp_path: Path) -> None:
    with leading_operator(up, tmp_path, "op-a"):
        up.apply(CANARY)
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.27"), "the set comes up")
        stable = _status(up)["currentRevision"]
        claims = _claim_uids(up)
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", IMAGE)
        up.until(lambda: _status(up).get("currentStepIndex") == 1 and _ready(up)
                 and sorted(n for n, r in _revisions(up).items() if r != stable) == ["web-2", "web-3"],
                 "the canary holds two pods at the pause", on_fail=lambda: str(_status(up)))
        untouched = {n: p["metadata"]["uid"] for n, p in _pods(up).items() if n in ("web-0", "web-1")}
        canaries = {n: p["metadata"]["uid"] for n, p in _pods(up).items() if n in ("web-2", "web-3")}

        aborted = up.plugin("rollout", "abort", "rsts/web")
        assert aborted.returncode == 0, aborted.stderr
        assert aborted.stdout == (f"statefulset.apps.rollwise.dev/web aborted: its pods return to the stable "
                                  f"revision {stable}\n")
        up.until(lambda: set(_revisions(up).values()) == {stable} and _ready(up) and len(_pods(up)) == 4,
                 "every pod back at the stable revision", deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
        pods = _pods(up)
        assert {n: pods[n]["metadata"]["uid"] for n in untouched} == untouched
        assert all(pods[n]["metadata"]["uid"] != uid for n, uid in canaries.items())  # recreated at stable
        assert _claim_uids(up) == claims  # the same claims, bound to the pods again
        sts = get_json(up, "rsts", "web")
        assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"  # the spec keeps it
        progressing = next(c for c in sts["status"]["conditions"] if c["type"] == "Progressing")
        assert progressing["status"] == "False" and progressing["reason"] == "RolloutAborted"
        assert "aborted by rollwise rollout abort" in progressing["message"]
        ready = next(c for c in sts["status"]["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "False" and ready["reason"] == "RolloutAborted"
        events = [e for e in get_json(up, "events")["items"] if e.get("reason") == "RolloutAborted"]
        assert len(events) == 1 and events[0]["type"] == "Warning"

        status = zygote.run(["status", "rsts/web", "--kubeconfig", str(up.kubeconfig)], env=up.env,
                            timeout=DEADLINE)
        assert status.returncode == 1
        aborted_revision = sts["status"]["abortedRevision"]
        assert status.stdout.startswith(f"✖ Degraded - RolloutAborted: rollout to revision {aborted_revision}"
                                        f" aborted by rollwise rollout abort: every pod returns to the stable "
                                        f"revision {stable}\n"), status.stdout
        watched = zygote.run(["rollout", "status", "rsts/web", "--kubeconfig", str(up.kubeconfig)], env=up.env,
                             timeout=DEADLINE)
        assert watched.returncode == 1 and "rollout failed: RolloutAborted" in watched.stderr
        again = up.plugin("rollout", "abort", "rsts/web")
        assert again.returncode == 1 and "aborted already" in again.stderr and again.stdout == ""

        retried = up.plugin("rollout", "retry", "rsts/web")
        assert retried.returncode == 0, retried.stderr
        up.until(lambda: _status(up).get("currentStepIndex") == 1 and _ready(up)
                 and sorted(n for n, r in _revisions(up).items() if r != stable) == ["web-2", "web-3"],
                 "retry holds two pods at the pause again", deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
        assert "abort" not in _status(up)
