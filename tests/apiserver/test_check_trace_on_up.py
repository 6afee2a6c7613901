"""`rollwise check-trace` on the records of real runs: `rollwise up` driven by kubectl (its audit log and its
in-process controllers' decision log, `up --trace`), and the operator against `up` (`run --trace`, and up's audit
log naming the operator's writes). A clean rollout leaves clean records; the same records doctored are caught.
Every process is started here and ended by its pid; every wait has a deadline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubectl_support import Up, running_up, statefulset
from operator_support import WEB, get_json, leading_operator, rolled_out, running_up_for_operator

from rollwise.cli import main

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.kubectl


def _check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["check-trace", str(path)])
    return code, capsys.readouterr().out


def _apps_rolled_out(up: Up, image: str) -> bool:
    sts = get_json(up, "statefulset", "web")
    status = sts.get("status") or {}
    pods = get_json(up, "pods", "-l", "app=web")["items"]
    return (status.get("observedGeneration") == sts["metadata"]["generation"] and status.get("readyReplicas") == 3
            and status.get("updatedReplicas") == 3 and len(pods) == 3
            and all(p["spec"]["containers"][0]["image"] == image for p in pods))


def _drop_a_pod_delete(audit: Path, out: Path) -> None:
    lines = audit.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if (e := json.loads(line))["resource"] == "pods"
              and e["verb"] == "delete" and e["code"] == 200)
    out.write_text("\n".join(lines[:at] + lines[at + 1:]) + "\n")


def test_a_rollout_through_up_leaves_a_clean_audit_log_and_decision_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "decisions.jsonl"
    with running_up(tmp_path, "--trace", str(trace)) as up:
        up.apply(statefulset("web", image="nginx:1.26"))
        up.until(lambda: _apps_rolled_out(up, "nginx:1.26"), "the set comes up")
        up.kubectl("set", "image", "statefulset/web", "app=nginx:1.27")
        up.until(lambda: _apps_rolled_out(up, "nginx:1.27"), "the rollout completes")
    code, out = _check(up.audit_log, capsys)
    assert code == 0 and "writes checked, no violation" in out, out
    code, out = _check(trace, capsys)
    assert code == 0 and "decisions checked, no violation" in out, out
    doctored = tmp_path / "doctored-audit.jsonl"
    _drop_a_pod_delete(up.audit_log, doctored)
    code, out = _check(doctored, capsys)
    assert code == 1 and "one-pod-per-ordinal: pod default/web-" in out, out


def test_the_operator_against_up_leaves_a_clean_decision_log_and_audit_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "operator.jsonl"
    with running_up_for_operator(tmp_path) as up:
        up.kubectl("apply", "-k", str(ROOT / "deploy"))
        with leading_operator(up, tmp_path, "op-a", "--trace", str(trace)):
            up.apply(WEB)
            up.until(lambda: rolled_out(up, "web", 3, "nginx:1.27"), "the set comes up through the operator")
            up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
                       '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}')
            up.until(lambda: rolled_out(up, "web", 3, "nginx:1.28"), "the rollout completes through the operator")
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    deletes = [a for line in lines for a in line["actions"] if a["type"] == "DeletePod"]
    assert len(deletes) == 3 and all(a["reason"] for a in deletes), "each delete is logged with its reason"
    assert all(line["resourceVersions"]["set"] for line in lines)
    code, out = _check(trace, capsys)
    assert code == 0 and f"{len(lines)} decisions checked, no violation" in out, out
    code, out = _check(up.audit_log, capsys)
    assert code == 0, out
    # The operator's first delete decided on a view where one more pod was already down: past maxUnavailable 2.
    i = next(n for n, line in enumerate(lines) if any(a["type"] == "DeletePod" for a in line["actions"]))
    victims = {a["name"] for a in lines[i]["actions"] if a["type"] == "DeletePod"}
    for pod in lines[i]["view"]["pods"]:
        if pod["metadata"]["name"] not in victims:
            for c in pod["status"].get("conditions") or ():
                if c["type"] == "Ready":
                    c["status"] = "False"
            break
    doctored = tmp_path / "doctored.jsonl"
    doctored.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out = _check(doctored, capsys)
    assert code == 1 and f":{i + 1}: budget: deleted available pod(s)" in out, out
