"""Each benchmark's ``--json`` prints one JSON document with the figures it promises, so they can be tracked.

Run at tiny sizes: these pin the shape of the output, never a timing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
KUBECTL_132 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32"


def _bench(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--json", *args], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    doc = json.loads(done.stdout)  # the whole of stdout is the one document
    assert isinstance(doc, dict)
    return doc


def _has(doc: dict[str, Any], keys: str) -> None:
    missing = set(keys.split()) - set(doc)
    assert not missing, f"missing {sorted(missing)} in {doc}"


def test_the_explorer_bench_prints_its_cases_and_total_as_json() -> None:
    doc = _bench("explore.py", "--replicas", "1", "--faults", "0", "--user-actions", "0", "--only", "OnDelete")
    _has(doc, "cases total")
    assert [c["policy"] for c in doc["cases"]] == ["OrderedReady", "Parallel"]
    for case in doc["cases"]:
        _has(case, "strategy policy states transitions cpu_s")
        assert case["strategy"] == "OnDelete" and case["states"] > 0
    _has(doc["total"], "states cpu_s")
    assert doc["total"]["states"] == sum(c["states"] for c in doc["cases"])


def test_the_api_server_bench_prints_create_get_list_and_watch_figures_as_json() -> None:
    doc = _bench("apiserver.py", "--pods", "12", "--gets", "12", "--lists", "2", "--watchers", "2", "--writes", "3")
    _has(doc, "create get list watch")
    _has(doc["create"], "req_per_s p50_ms p99_ms")
    _has(doc["get"], "req_per_s p50_ms p99_ms")
    _has(doc["list"], "p50_ms p99_ms bytes")
    _has(doc["watch"], "events_per_s p50_ms p99_ms")
    assert doc["list"]["bytes"] > 12 * 100  # the twelve pods are in it


@pytest.mark.kubectl
@pytest.mark.skipif(not (os.access(KUBECTL_132, os.X_OK) or shutil.which("kubectl")), reason="no kubectl")
def test_the_operator_bench_prints_its_phases_and_requests_per_replaced_pod_as_json() -> None:
    doc = _bench("operator_on_up.py", "--sets", "2", "--replicas", "2", "--capacity", "10")
    _has(doc, "create rollout requests_per_replaced_pod up_create_capacity_per_s")
    _has(doc["rollout"], "p50_ms p99_ms operator_cpu_s up_cpu_s replaced_pods actions_per_s")
    assert doc["rollout"]["replaced_pods"] == 4
    assert doc["requests_per_replaced_pod"]["create pods"] >= 1  # every pod was replaced by a create
