"""`rollwise rollout status|history|undo|restart` against `rollwise up`, through kubectl's plugin mechanism
(`kubectl rollwise ...` runs `kubectl-rollwise` from PATH), on the custom kind that `kubectl rollout` refuses."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubectl_support import Up
from operator_support import WEB

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(plugin=True),
]


def _pods(up: Up) -> list[dict[str, Any]]:
    return up.read("pods", "-l", "app=web")["items"]


def _images(up: Up) -> list[str]:
    return sorted(p["spec"]["containers"][0]["image"] for p in _pods(up))


def _set_image(up: Up, image: str) -> None:
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
               json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}))


def test_the_plugin_follows_a_rollout_lists_history_undoes_and_restarts(up: Up) -> None:
    up.install_crd()
    up.apply(WEB)
    first = up.plugin("rollout", "status", "rsts/web", "--timeout=60s")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[-1].startswith("statefulset rolling update complete 3 pods at revision web-")

    _set_image(up, "nginx:1.28")
    rolled = up.plugin("rollout", "status", "rsts/web", "--timeout=60s")
    assert rolled.returncode == 0, rolled.stderr
    lines = rolled.stdout.splitlines()
    assert lines[-1].startswith("statefulset rolling update complete 3 pods")  # the rollout may beat the plugin
    assert all(line.startswith(("Waiting for", "waiting for statefulset rolling update")) for line in lines[:-1])
    assert _images(up) == ["nginx:1.28"] * 3

    history = up.plugin("rollout", "history", "rsts/web")
    assert history.returncode == 0
    assert history.stdout.splitlines()[:4] == ["statefulset.apps.rollwise.dev/web", "REVISION  CHANGE-CAUSE",
                                               "1         <none>", "2         <none>"]
    shown = up.plugin("rollout", "history", "rsts/web", "--revision=1")
    assert "image: nginx:1.27" in shown.stdout

    undo = up.plugin("rollout", "undo", "rsts/web")
    assert undo.stdout.strip() == "statefulset.apps.rollwise.dev/web rolled back", undo.stderr
    assert up.plugin("rollout", "status", "rsts/web", "--timeout=60s").returncode == 0
    assert _images(up) == ["nginx:1.27"] * 3
    again = up.plugin("rollout", "undo", "rsts/web", "--to-revision=3")
    assert "skipped rollback (current template already matches revision 3)" in again.stdout, again.stderr

    before = {p["metadata"]["uid"] for p in _pods(up)}
    restart = up.plugin("rollout", "restart", "rsts/web")
    assert restart.stdout.strip() == "statefulset.apps.rollwise.dev/web restarted"
    assert up.plugin("rollout", "status", "rsts/web", "--timeout=60s").returncode == 0
    pods = _pods(up)
    assert not before & {p["metadata"]["uid"] for p in pods}, "every pod was replaced"
    assert all("kubectl.kubernetes.io/restartedAt" in p["metadata"]["annotations"] for p in pods)


def test_status_exits_1_on_timeout_and_errors_are_reported(up: Up) -> None:
    up.install_crd()
    up.apply(WEB)
    assert up.plugin("rollout", "status", "rsts/web", "--timeout=60s").returncode == 0
    _set_image(up, "nginx:typo")  # never pulls: the rollout cannot finish
    stuck = up.plugin("rollout", "status", "rsts/web", "--timeout=2s")
    assert stuck.returncode == 1
    assert "error: timed out waiting for the condition" in stuck.stderr
    assert stuck.stdout.splitlines()[-1] in ("Waiting for 1 pods to be ready...", "Waiting for 2 pods to be ready...")
    missing = up.plugin("rollout", "status", "rsts/nope", "--timeout=2s")
    assert missing.returncode == 1 and "NotFound" in missing.stderr
    bad = up.plugin("rollout", "status", "deploy/web")
    assert bad.returncode == 2 and bad.stdout == ""


CANARY = WEB.replace("name: web,", "name: canary,").replace("app: web", "app: canary").replace(
    "rollingUpdate: {maxUnavailable: 2}", "rollingUpdate: {partition: 2}")


def test_a_canary_held_at_its_partition_is_ready_and_the_plugin_agrees(up: Up) -> None:
    up.install_crd()
    up.apply(CANARY)
    up.kubectl("wait", "--for=condition=Ready", "rsts/canary", "--timeout=60s")
    up.kubectl("patch", "rsts", "canary", "--type=merge", "-p",
               json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}}))
    waited = up.kubectl("wait", "--for=condition=Ready", "rsts/canary", "--timeout=60s", check=False)
    assert waited.returncode == 0, waited.stderr
    status = up.read("rsts", "canary")["status"]
    reasons = {c["type"]: c["reason"] for c in status["conditions"]}
    assert reasons["Ready"] == reasons["Progressing"] == "PartitionRolledOut"
    plugin = up.plugin("rollout", "status", "rsts/canary", "--timeout=60s")
    assert plugin.returncode == 0, plugin.stderr
    assert plugin.stdout.splitlines()[-1] == "partitioned roll out complete: 1 new pods have been updated..."
    images = sorted(p["spec"]["containers"][0]["image"] for p in json.loads(
        up.kubectl("get", "pods", "-l", "app=canary", "-o", "json").stdout)["items"])
    assert images == ["nginx:1.27", "nginx:1.27", "nginx:1.28"]
