"""``spec.paused`` on `rollwise up`, driven by the real kubectl: `kubectl rollwise rollout pause|resume` on the custom
kind and, as a lab proposal (`--proposals on`, with its warning), on apps/v1."""

from __future__ import annotations

import json
from typing import Any

import pytest
import zygote
from kubectl_support import DEADLINE, Up, statefulset
from operator_support import WEB

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(plugin=True),
]


def _images(up: Up, app: str) -> list[str]:
    return sorted(p["spec"]["containers"][0]["image"] for p in up.read("pods", "-l", f"app={app}")["items"])


def _progressing(up: Up, kind: str, name: str) -> dict[str, Any]:
    conditions = up.read(kind, name).get("status", {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Progressing"), {})


def test_pause_holds_a_custom_set_at_its_revision_and_resume_rolls_it(up: Up) -> None:
    up.install_crd()
    up.apply(WEB)
    assert up.plugin("rollout", "status", "rsts/web", "--timeout=60s").returncode == 0
    paused = up.plugin("rollout", "pause", "rsts/web")
    assert paused.stdout.strip() == "statefulset.apps.rollwise.dev/web paused", paused.stderr
    again = up.plugin("rollout", "pause", "rsts/web")
    assert again.returncode == 1 and "is already paused" in again.stderr
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
               json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}}))
    up.until(lambda: _progressing(up, "rsts", "web").get("reason") == "RolloutPaused", "Progressing says paused")
    assert _progressing(up, "rsts", "web")["status"] == "Unknown"
    up.kubectl("scale", "rsts/web", "--replicas=4")
    up.until(lambda: len(_images(up, "web")) == 4, "a paused set still scales")
    assert _images(up, "web").count("nginx:1.27") >= 3, "no pod was replaced for the new template"
    shown = zygote.run(["get", "rsts/web"], env=up.env, timeout=DEADLINE)
    assert "Paused" in shown.stdout, shown.stdout + shown.stderr
    resumed = up.plugin("rollout", "resume", "rsts/web")
    assert resumed.stdout.strip() == "statefulset.apps.rollwise.dev/web resumed", resumed.stderr
    assert up.plugin("rollout", "status", "rsts/web", "--timeout=60s").returncode == 0
    assert _images(up, "web") == ["nginx:1.28"] * 4
    assert up.plugin("rollout", "resume", "rsts/web").returncode == 1


def test_paused_on_apps_v1_is_a_proposal_up_keeps_with_a_warning(up: Up) -> None:
    applied = up.kubectl("apply", "-f", "-", stdin=statefulset("db", image="nginx:1.26", replicas=2, claims=False))
    assert applied.returncode == 0
    up.until(lambda: up.read("sts", "db").get("status", {}).get("readyReplicas") == 2, "the set comes up")
    patched = up.kubectl("patch", "sts", "db", "--type=merge", "-p", '{"spec":{"paused":true}}')
    assert "spec.paused: a Kubernetes 1.37.0 API server does not know the field" in patched.stderr
    up.kubectl("set", "image", "sts/db", "app=nginx:1.27")
    up.until(lambda: _progressing(up, "sts", "db").get("reason") == "RolloutPaused", "Progressing says paused")
    assert _images(up, "db") == ["nginx:1.26"] * 2
    assert up.plugin("rollout", "resume", "sts/db").returncode == 0
    up.until(lambda: _images(up, "db") == ["nginx:1.27"] * 2, "the rollout goes on after a resume")
