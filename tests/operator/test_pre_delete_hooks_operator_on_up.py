"""Pre-delete hooks through the operator: `rollwise run` against `rollwise up` (which leaves the custom kind to it)
marks each hooked pod PreparingDelete, is woken when the test — the application's agent — removes the hook's label
with kubectl, and only then deletes the pod; the rollout completes one drained pod at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import HOOK, Up, hooked_set
from operator_support import get_json, leading_operator, rolled_out

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]


def _pods(up: Up) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in get_json(up, "pods", "-l", "app=web")["items"]}


def _marked(up: Up) -> list[str]:
    return sorted(n for n, p in _pods(up).items() if p["metadata"].get("labels", {}).get(
        "rollwise.dev/lifecycle-state") == "PreparingDelete" and not p["metadata"].get("deletionTimestamp"))


def _progressing(up: Up) -> dict[str, Any]:
    conditions = get_json(up, "rsts", "web").get("status", {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Progressing"), {})


def test_the_operator_deletes_a_hooked_pod_only_once_its_agent_released_it(up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    with leading_operator(up, tmp_path, "op-a"):
        up.apply(hooked_set(strategy="{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}"))
        up.until(lambda: rolled_out(up, "web", 3, "nginx:1.27"), "the set comes up through the operator")
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", json.dumps(
            {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}}))
        up.until(lambda: _marked(up) == ["web-1", "web-2"], "two pods (maxUnavailable 2) marked PreparingDelete")
        uids = {n: p["metadata"]["uid"] for n, p in _pods(up).items()}
        up.until(lambda: "to be released by its pre-delete hook" in _progressing(up).get("message", ""),
                 "Progressing names the hook")
        assert {n: p["metadata"]["uid"] for n, p in _pods(up).items()} == uids, "nothing deleted while hooked"
        up.kubectl("label", "pod", "web-2", f"{HOOK}-")
        up.until(lambda: _pods(up).get("web-2", {}).get("metadata", {}).get("uid") not in (None, uids["web-2"]),
                 "the operator is woken by the label's removal and replaces web-2")
        assert _pods(up)["web-1"]["metadata"]["uid"] == uids["web-1"], "web-1 still holds"
        for name in ("web-1", "web-0"):
            up.until(lambda n=name: n in _marked(up), f"{name} is marked")
            up.kubectl("label", "pod", name, f"{HOOK}-")
        up.until(lambda: rolled_out(up, "web", 3, "nginx:1.28"), "every pod drained and replaced")
