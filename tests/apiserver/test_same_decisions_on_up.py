"""The same decisions in both worlds: a bundled scenario replayed against `rollwise up` through the operator gives,
per set, the same sequence of pod creates and deletes as the simulator (operator-plan §4; times are not compared).

Replayed: scenarios whose steps `up` can express with kubectl (waitFor, patch, scale, after) and whose kubelet needs
no application model; a representative subset, for CI time: an OrderedReady rolling update, EnforcedRollingUpdate's
safety halt through two broken templates, and a scale down and up with claim retention. Their plain sets become the
custom kind, in both worlds, so the operator (not `up`'s built-in controller) decides.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubectl_support import Up, find_kubectl, start_up, stop_up
from operator_support import Operator, audit_entries, get_json

from rollwise.cli.options import load_with_overrides
from rollwise.drivers.sim import run_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "src" / "rollwise" / "examples"
SCENARIOS = [EXAMPLES / "rolling-update.yaml", EXAMPLES / "enforced-second-broken-template.yaml",
             ROOT / "tests" / "scenarios" / "scale-and-retention.yaml"]
SPEED = 20.0  # kubectl_support.start_up's --speed
OPERATOR = "op-replay"

pytestmark = pytest.mark.kubectl


def _as_custom(doc: dict[str, Any]) -> dict[str, Any]:
    for obj in doc["objects"]:
        if obj["kind"] == "StatefulSet":
            obj["apiVersion"] = "apps.rollwise.dev/v1alpha1"
            obj["metadata"].setdefault("namespace", "default")
    return doc


def _simulated(doc: dict[str, Any], tmp: Path) -> dict[str, list[tuple[str, str]]]:
    path = tmp / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = run_scenario(load_with_overrides(str(path), strategy=None))
    out: dict[str, list[tuple[str, str]]] = {}
    for e in result["events"]:
        if e["type"] in ("PodCreated", "PodDeleteRequested") and e.get("by") == "statefulset-controller":
            verb = "create" if e["type"] == "PodCreated" else "delete"
            out.setdefault(e["pod"].rsplit("-", 1)[0], []).append((verb, e["pod"]))
    return out


def _on_up(up: Up) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for e in audit_entries(up):
        if e["user"] == OPERATOR and e["resource"] == "pods" and e["verb"] in ("create", "delete") \
                and e["code"] < 300:
            out.setdefault(e["name"].rsplit("-", 1)[0], []).append((e["verb"], e["name"]))
    return out


def _ready(up: Up, name: str) -> bool:
    sts = get_json(up, "rsts", name)
    status = sts.get("status") or {}
    return status.get("observedGeneration") == sts["metadata"]["generation"] and \
        status.get("readyReplicas") == sts["spec"]["replicas"] == status.get("replicas")


def _complete(up: Up, name: str) -> bool:
    sts = get_json(up, "rsts", name)
    return any(c["type"] == "Ready" and c["status"] == "True" and c.get("observedGeneration") ==
               sts["metadata"]["generation"] for c in (sts.get("status") or {}).get("conditions") or [])


def _replay(up: Up, doc: dict[str, Any]) -> None:
    for obj in doc["objects"]:
        up.apply(json.dumps(obj))
    for step in doc["steps"]:
        (kind, arg), = step.items()
        if kind == "waitFor":
            name = arg.get("ready") or arg.get("rolloutComplete")
            check = _ready if "ready" in arg else _complete
            up.until(lambda: check(up, name), f"waitFor {arg}")  # noqa: B023 - used at once
        elif kind == "scale":
            up.kubectl("scale", f"rsts/{arg['name']}", f"--replicas={arg['replicas']}")
        elif kind == "patch":
            up.kubectl("patch", "rsts", arg["name"], "--type=merge", "-p", json.dumps(arg["merge"]))
        elif kind == "after":
            end = time.monotonic() + float(arg) / SPEED
            up.until(lambda: time.monotonic() >= end, f"after {arg}")  # noqa: B023 - used at once
        else:
            raise AssertionError(f"step {kind} cannot be replayed against up")


@pytest.fixture
def kubectl() -> Iterator[str]:
    found = find_kubectl()
    if found is None:
        pytest.skip("kubectl is not installed")
    yield found


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_the_operator_against_up_decides_as_the_simulator(scenario: Path, kubectl: str, tmp_path: Path) -> None:
    doc = _as_custom(yaml.safe_load(scenario.read_text()))
    expected = _simulated(doc, tmp_path)
    assert any(verb == "delete" for seq in expected.values() for verb, _ in seq), "a scenario with decisions"
    kubelet = tmp_path / "scenario-kubelet.yaml"
    kubelet.write_text(yaml.safe_dump(doc.get("kubelet") or {}))
    up = start_up(tmp_path, kubectl, "--controllers=-apps.rollwise.dev", "--any-token", "--kubelet", str(kubelet))
    try:
        up.kubectl("apply", "-k", str(ROOT / "deploy"))
        op = Operator(up, tmp_path, OPERATOR)
        try:
            op.wait_for(r"started leading")
            _replay(up, doc)
        finally:
            assert op.stop() == 0
        assert _on_up(up) == expected
    finally:
        stop_up(up.proc)
