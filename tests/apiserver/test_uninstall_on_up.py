"""Uninstalling the operator on `rollwise up --controllers=-apps.rollwise.dev` (its own StatefulSet controller owns
apps/v1, the custom kind is left to the operator): `kubectl delete -k deploy/` removes the operator and leaves the
CRD, the custom set and every pod; `rollwise migrate rsts/NAME --to apps/v1` then hands the pods to the built-in
controller without replacing one (docs/install.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import zygote
from kubectl_support import DEADLINE, ROOT, Up
from operator_support import WEB, Operator, get_json, rolled_out

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]

CRD = "statefulsets.apps.rollwise.dev"


def _pods(up: Up) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in get_json(up, "pods", "-l", "app=web")["items"]}


def _migrate(up: Up, *args: str) -> subprocess.CompletedProcess[str]:
    return zygote.run(["migrate", *args, "--kubeconfig", str(up.kubeconfig)], env=up.env, timeout=DEADLINE * 2)


def _controller(pod: dict[str, Any]) -> tuple[str, str]:
    (ref,) = [r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")]
    return ref["apiVersion"], ref["uid"]


def _install_and_roll_out(up: Up, tmp_path: Path) -> dict[str, str]:
    up.install_rollwise()
    op = Operator(up, tmp_path, "op-a")
    try:
        op.wait_for(r"op-a started leading")
        up.apply(WEB)
        up.until(lambda: rolled_out(up, "web", 3, "nginx:1.27"), "the custom set runs three pods")
        pods = _pods(up)
        assert len(pods) == 3
        # What `kubectl delete -k deploy/` does on a real cluster: the operator's objects go, and its pods with them.
        # `up` empties a namespace at once where a cluster keeps it Terminating a while, so the objects kubectl
        # deletes after the Namespace are already gone: --ignore-not-found, as docs/install.md suggests too.
        deleted = up.kubectl("delete", "-k", str(ROOT / "deploy"), "--ignore-not-found")
        assert "customresourcedefinition" not in deleted.stdout
    finally:
        assert op.stop() in (0, 1)  # 1: its Lease went with the namespace before SIGTERM arrived
    return pods


def test_deleting_the_operators_manifests_leaves_the_crd_the_set_and_every_pod(up: Up, tmp_path: Path) -> None:
    pods = _install_and_roll_out(up, tmp_path)
    assert get_json(up, "crd", CRD)["metadata"]["name"] == CRD
    assert get_json(up, "rsts", "web")["spec"]["replicas"] == 3
    assert _pods(up) == pods, "every pod kept, none replaced"
    assert get_json(up, "deployments", "-A")["items"] == []


def test_after_the_uninstall_migrate_hands_every_pod_to_the_built_in_controller_unreplaced(
        up: Up, tmp_path: Path) -> None:
    pods = _install_and_roll_out(up, tmp_path)
    claims_before = get_json(up, "pvc")["items"]

    done = _migrate(up, "rsts/web", "--to", "apps/v1")
    assert done.returncode == 0, done.stderr
    assert "statefulset.apps/web adopted 3 pods" in done.stdout

    sts = get_json(up, "sts", "web")
    assert _pods(up) == pods, "no pod was replaced"
    for pod in get_json(up, "pods", "-l", "app=web")["items"]:
        assert _controller(pod) == ("apps/v1", sts["metadata"]["uid"])
    assert get_json(up, "rsts")["items"] == []
    assert get_json(up, "crd", CRD)["metadata"]["name"] == CRD
    assert get_json(up, "pvc")["items"] == claims_before
    # The built-in controller runs the set now: `kubectl rollout` works on it and rolls a new image through.
    up.kubectl("set", "image", "sts/web", "app=nginx:1.28")
    up.kubectl("rollout", "status", "sts/web", "--timeout=60s")
    assert sorted(p["spec"]["containers"][0]["image"] for p in get_json(up, "pods", "-l", "app=web")["items"]) == [
        "nginx:1.28"] * 3


RECREATE = WEB.replace("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}",
                       "{type: Recreate}")


def test_migrate_back_refuses_what_apps_v1_lacks_and_a_set_in_mid_rollout(up: Up) -> None:
    up.kubectl("apply", "-k", str(ROOT / "deploy" / "crds"))
    assert "Recreate" in RECREATE
    up.apply(RECREATE)

    refused = _migrate(up, "rsts/web", "--to", "apps/v1")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "spec.updateStrategy.type: apps/v1 has no strategy Recreate" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    assert get_json(up, "sts")["items"] == [] and get_json(up, "rsts", "web")

    up.kubectl("patch", "rsts", "web", "--subresource=status", "--type=merge", "-p",
               '{"status": {"currentRevision": "web-1", "updateRevision": "web-2"}}')
    mid = _migrate(up, "rsts/web", "--to", "apps/v1", "--strategy", "RollingUpdate")
    assert mid.returncode == 1 and "mid-rollout" in mid.stderr
    assert get_json(up, "sts")["items"] == [] and get_json(up, "rsts", "web")
