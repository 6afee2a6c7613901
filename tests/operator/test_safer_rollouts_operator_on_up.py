"""Pause and PodDisruptionBudgets through the operator: `rollwise run` against `rollwise up` (which leaves the
custom kind to it) holds a rollout at a budget `kubectl create pdb` made, keeps a paused set at its revision while
it still scales, and finishes the rollout once resumed, as far as the budget allows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up
from operator_support import WEB, get_json, leading_operator, rolled_out

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]


def _progressing(up: Up) -> dict[str, Any]:
    conditions = get_json(up, "rsts", "web").get("status", {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Progressing"), {})


def _images(up: Up) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
            for p in get_json(up, "pods", "-l", "app=web")["items"]}


def test_the_operator_waits_on_a_budget_holds_a_paused_set_and_resumes(up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    with leading_operator(up, tmp_path, "op-a"):
        up.apply(WEB)  # maxUnavailable 2
        up.until(lambda: rolled_out(up, "web", 3, "nginx:1.27"), "the set comes up through the operator")
        up.kubectl("create", "pdb", "web", "--selector=app=web", "--min-available=3")
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
                   '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}')
        up.until(lambda: "PodDisruptionBudget web allows 0 disruptions" in _progressing(up).get("message", ""),
                 "the rollout waits on the budget, and says so")
        assert set(_images(up).values()) == {"nginx:1.27"}

        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", '{"spec":{"paused":true}}')
        up.until(lambda: _progressing(up).get("reason") == "RolloutPaused", "Progressing says RolloutPaused")
        up.kubectl("patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"minAvailable":2}}')
        up.kubectl("scale", "rsts/web", "--replicas=4")
        up.until(lambda: len(_images(up)) == 4, "a paused set still scales")
        images = _images(up)
        assert [images[f"web-{i}"] for i in range(3)] == ["nginx:1.27"] * 3, "paused: nothing replaced"

        up.kubectl("patch", "rsts", "web", "--type=merge", "-p", '{"spec":{"paused":null}}')
        up.until(lambda: rolled_out(up, "web", 4, "nginx:1.28"), "resumed, the rollout finishes")
