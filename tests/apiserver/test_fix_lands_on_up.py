"""A fix always lands on ``rollwise up`` (real kubectl, up's built-in controllers) and through ``rollwise run`` (the
operator, lightkube, on the custom kind): a representative subset of the matrix the simulator sweeps in full
(tests/cli/test_fix_lands.py). Each set gets an image that cannot be pulled (up's kubelet: ``nginx:typo``), then a
good one, and must complete on the good one. Several sets share one server, so the subset costs one start-up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fix_matrix import RECOVERING
from kubectl_support import Up
from operator_support import Operator, get_json

ROOT = Path(__file__).resolve().parents[2]

# Half a minute of a worker waiting on pull back-offs: make test-slow (CI runs it). make test keeps the whole matrix in
# the simulator (tests/cli/test_fix_lands.py) and a fix landing on up under EnforcedRollingUpdate
# (test_kubectl.py::test_a_stuck_image_is_fixed_later_under_enforced_rolling_update).
pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
    pytest.mark.slow,
]

ON_UP = [("RollingUpdate+timeout/budget1", "OrderedReady"), ("RollingUpdate+timeout/budget2", "OrderedReady"),
         ("EnforcedRollingUpdate", "Parallel"), ("Recreate", "OrderedReady")]
THROUGH_THE_OPERATOR = [("RollingUpdate+timeout/budget1", "OrderedReady"), ("EnforcedRollingUpdate", "OrderedReady")]


def _manifest(api_version: str, name: str, strategy: str, policy: str) -> str:
    return yaml.safe_dump({
        "apiVersion": api_version, "kind": "StatefulSet", "metadata": {"name": name},
        "spec": {"replicas": 3, "podManagementPolicy": policy, "updateStrategy": RECOVERING[strategy],
                 "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"terminationGracePeriodSeconds": 1,
                                       "containers": [{"name": "app", "image": "nginx:1.26"}]}}}})


def _pods(up: Up, name: str) -> list[dict[str, Any]]:
    return list(get_json(up, "pods", "-l", f"app={name}")["items"])


def _pull_failing(up: Up, name: str) -> bool:
    for pod in _pods(up, name):
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            if ((cs.get("state") or {}).get("waiting") or {}).get("reason") in ("ErrImagePull", "ImagePullBackOff"):
                return True
    return False


def _on(up: Up, resource: str, name: str, image: str) -> bool:
    sts = get_json(up, resource, name)
    status = sts.get("status") or {}
    pods = _pods(up, name)
    return (status.get("observedGeneration") == sts["metadata"]["generation"]
            and status.get("updatedReplicas") == 3 and status.get("readyReplicas") == 3 and len(pods) == 3
            and all(p["spec"]["containers"][0]["image"] == image and not p["metadata"].get("deletionTimestamp")
                    for p in pods))


def _set_image(up: Up, resource: str, name: str, image: str) -> None:
    up.kubectl("patch", resource, name, "--type=merge", "-p",
               json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}))


def _break_then_fix(up: Up, resource: str, names: list[str]) -> None:
    for name in names:
        up.until(lambda name=name: _on(up, resource, name, "nginx:1.26"), f"{name} comes up")  # type: ignore[misc]
    for name in names:
        _set_image(up, resource, name, "nginx:typo")
    for name in names:
        up.until(lambda name=name: _pull_failing(up, name), f"{name} fails to pull")  # type: ignore[misc]
    for name in names:
        _set_image(up, resource, name, "nginx:1.27")
    for name in names:
        up.until(lambda name=name: _on(up, resource, name, "nginx:1.27"),  # type: ignore[misc]
                 f"{name} completes on the fix")


def test_a_fix_lands_on_up_for_the_recovering_strategies(up: Up) -> None:
    names = []
    for i, (strategy, policy) in enumerate(ON_UP):
        name = f"fix{i}"
        up.apply(_manifest("apps/v1", name, strategy, policy))
        names.append(name)
    _break_then_fix(up, "sts", names)


def test_a_fix_lands_through_the_operator(up: Up, tmp_path: Path) -> None:
    up.kubectl("apply", "-k", str(ROOT / "deploy"))
    op = Operator(up, tmp_path, "op-fix")
    try:
        op.wait_for(r"op-fix started leading")
        names = []
        for i, (strategy, policy) in enumerate(THROUGH_THE_OPERATOR):
            name = f"op{i}"
            up.apply(_manifest("apps.rollwise.dev/v1alpha1", name, strategy, policy))
            names.append(name)
        _break_then_fix(up, "rsts", names)
        for name in names:
            done = up.kubectl("wait", f"rsts/{name}", "--for=condition=Ready", "--timeout=60s", check=False)
            assert done.returncode == 0, done.stderr
    finally:
        assert op.stop() == 0
