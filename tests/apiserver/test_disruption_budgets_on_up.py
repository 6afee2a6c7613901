"""PodDisruptionBudgets on `rollwise up`, driven by the real kubectl: `kubectl create pdb` holds a rollout at the
budget (the condition names it), and `pods/eviction` answers as kube-apiserver does (429 with the DisruptionBudget
cause when a budget refuses, 201 Success and the pod deleted when it allows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up, statefulset

pytestmark = pytest.mark.kubectl


def _evict(up: Up, tmp: Path, pod: str) -> Any:
    body = tmp / f"evict-{pod}.json"
    body.write_text(json.dumps({"apiVersion": "policy/v1", "kind": "Eviction",
                                "metadata": {"name": pod, "namespace": "default"}}))
    return up.kubectl("create", "--raw", f"/api/v1/namespaces/default/pods/{pod}/eviction", "-f", str(body),
                      check=False)


def _ready(up: Up, name: str, replicas: int) -> bool:
    return up.read("sts", name).get("status", {}).get("availableReplicas") == replicas


def test_a_budget_holds_a_rollout_and_the_eviction_api_honours_it(up: Up, tmp_path: Path) -> None:
    up.kubectl("apply", "-f", "-", stdin=statefulset("web", image="nginx:1.26", replicas=3, claims=False,
                                                      strategy="{type: RollingUpdate, rollingUpdate: "
                                                               "{maxUnavailable: 3}}"))
    up.until(lambda: _ready(up, "web", 3), "the set comes up")
    created = up.kubectl("create", "pdb", "web", "--selector=app=web", "--min-available=3")
    assert "poddisruptionbudget.policy/web created" in created.stdout
    up.until(lambda: up.read("pdb", "web").get("status", {}).get("currentHealthy") == 3,
             "up's disruption controller writes the budget's status")
    status = up.read("pdb", "web")["status"]
    assert (status["disruptionsAllowed"], status["desiredHealthy"], status["expectedPods"]) == (0, 3, 3)
    assert "web    3               N/A               0" in up.kubectl("get", "pdb", "web").stdout

    refused = _evict(up, tmp_path, "web-1")
    assert refused.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in refused.stderr
    assert up.read("pod", "web-1")["metadata"].get("deletionTimestamp") is None

    up.kubectl("set", "image", "sts/web", "app=nginx:1.27")

    def held() -> bool:
        conditions = up.read("sts", "web").get("status", {}).get("conditions") or []
        return any("PodDisruptionBudget web allows 0 disruptions (needs 3 healthy pods, has 3)" in c["message"]
                   for c in conditions if c["type"] == "Progressing")

    up.until(held, "the rollout waits, naming the budget")
    images = {p["spec"]["containers"][0]["image"] for p in up.read("pods", "-l", "app=web")["items"]}
    assert images == {"nginx:1.26"}

    up.kubectl("patch", "pdb", "web", "--type=merge", "-p", '{"spec":{"minAvailable":2}}')
    up.until(lambda: {p["spec"]["containers"][0]["image"] for p in up.read("pods", "-l", "app=web")["items"]}
             == {"nginx:1.27"} and _ready(up, "web", 3), "the rollout goes on, one pod at a time")

    before = up.read("pod", "web-0")["metadata"]["uid"]
    allowed = _evict(up, tmp_path, "web-0")
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["status"] == "Success"

    def evicted() -> bool:
        found = up.kubectl("get", "pod", "web-0", "-o", "json", check=False)
        if found.returncode != 0:
            return True  # gone, not yet recreated
        meta = json.loads(found.stdout)["metadata"]
        return meta.get("deletionTimestamp") is not None or meta["uid"] != before

    up.until(evicted, "the evicted pod is deleted (and the set brings it back)")
