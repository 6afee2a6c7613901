"""`rollwise check-trace` on decision logs the simulator writes (`simulate --trace`): every bundled scenario's log
is clean, and a log doctored so one invariant breaks is caught at the doctored line (exit 1), each invariant in
turn; a malformed line exits 2 with its number and what is wrong, never a traceback."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "examples"
SCENARIOS = sorted(p for p in EXAMPLES.glob("*.yaml") if p.name != "explore-web.yaml")  # that one is a manifest

Line = dict[str, Any]


def trace_of(tmp: Path, scenario: Path, *extra: str) -> list[Line]:
    out = tmp / f"{scenario.stem}.jsonl"
    assert main(["simulate", str(scenario), "--json", "--trace", str(out), *extra]) in (0, 1)
    return [json.loads(line) for line in out.read_text().splitlines()]


def check(tmp: Path, lines: list[Line] | str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    path = tmp / "doctored.jsonl"
    path.write_text(lines if isinstance(lines, str) else "".join(json.dumps(x) + "\n" for x in lines))
    capsys.readouterr()
    code = main(["check-trace", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def first(lines: list[Line], want: Callable[[Line], bool]) -> int:
    return next(i for i, line in enumerate(lines) if want(line))


def acts(line: Line, kind: str) -> list[dict[str, Any]]:
    return [a for a in line["actions"] if a["type"] == kind]


def pod(line: Line, name: str) -> dict[str, Any]:
    return next(p for p in line["view"]["pods"] if p["metadata"]["name"] == name)


def ready(p: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or ())


def unready(p: dict[str, Any]) -> None:
    for c in p["status"].get("conditions") or ():
        if c["type"] == "Ready":
            c["status"] = "False"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
def test_the_log_of_every_bundled_scenario_is_clean(tmp_path: Path, scenario: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, scenario)
    assert lines, "a scenario's controllers decide something"
    code, out, err = check(tmp_path, lines, capsys)
    assert (code, err) == (0, ""), out
    assert f"{len(lines)} decisions checked, no violation" in out


def test_a_second_pod_at_an_ordinal_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "rolling-update.yaml")
    i = first(lines, lambda x: bool(acts(x, "DeletePod")))
    victim = acts(lines[i], "DeletePod")[0]["name"]
    existing = copy.deepcopy(pod(lines[i], victim))
    existing["metadata"]["uid"] = "another"
    lines[i]["actions"].append({"type": "CreatePod", "pod": existing, "ordinal": int(victim.rsplit("-", 1)[1]),
                                "revision": "r", "reason": "planted"})
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: one-pod-per-ordinal: created {victim} while {victim} holds" in out
    assert f"line {i + 1}: t=" in out


def test_a_delete_past_the_budget_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "rolling-update.yaml")
    i = first(lines, lambda x: bool(acts(x, "DeletePod")))
    victim = acts(lines[i], "DeletePod")[0]["name"]
    other = next(p for p in lines[i]["view"]["pods"] if p["metadata"]["name"] != victim)
    unready(other)  # one more ordinal already down: the delete now takes two below available, budget 1
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: budget: deleted available pod(s) {victim}" in out, out


def test_a_delete_below_the_partition_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "partitioned-canary.yaml")
    i = first(lines, lambda x: bool(acts(x, "DeletePod")))
    victim = acts(lines[i], "DeletePod")[0]["name"]
    lines[i]["view"]["set"]["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 10
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: partition: deleted {victim} below partition 10" in out, out


def test_a_claim_lost_under_retain_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "rolling-update.yaml")
    i = first(lines, lambda x: len(x["view"]["claims"]) >= 2)
    gone = sorted(lines[i]["view"]["claims"])[0]
    del lines[i + 1]["view"]["claims"][gone]
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 2}: claims: claim {gone} deleted" in out, out
    assert f"line {i + 1}:" in out and f"line {i + 2}:" in out


def test_recreate_creating_beside_an_old_revision_is_caught(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "rolling-update.yaml", "--strategy", "Recreate")
    revisions = {a["revision"] for x in lines for a in acts(x, "CreatePod")}
    assert len(revisions) == 2, "the scenario changes the template once"
    i = first(lines, lambda x: bool(acts(x, "CreatePod")) and x["view"]["pods"] == []
              and acts(x, "CreatePod")[0]["revision"] != acts(lines[0], "CreatePod")[0]["revision"])
    old = copy.deepcopy(acts(lines[0], "CreatePod")[0]["pod"])
    old["metadata"]["name"] = "web-9"
    lines[i]["view"]["pods"].append(old)
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: recreate: " in out and "web-9" in out, out


def test_ordered_creation_past_an_unready_pod_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "rolling-update.yaml")
    i = first(lines, lambda x: any(a["ordinal"] > 0 for a in acts(x, "CreatePod")))
    create = acts(lines[i], "CreatePod")[0]
    below = f"web-{create['ordinal'] - 1}"
    unready(pod(lines[i], below))
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: ordered-creation: " in out and f"ordinal {create['ordinal'] - 1} is not" in out


def test_a_quorum_aware_delete_that_breaks_quorum_is_caught(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "etcd-member-down.yaml")
    i = first(lines, lambda x: x["quorumAware"] and bool(acts(x, "DeletePod"))
              and ready(pod(x, acts(x, "DeletePod")[0]["name"])))
    victim = acts(lines[i], "DeletePod")[0]["name"]
    others = [p for p in lines[i]["view"]["pods"] if p["metadata"]["name"] != victim]
    for p in others[1:]:
        unready(p)  # of three members only the victim and one other participate: deleting it leaves one
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: quorum: deleted participating member(s) {victim}: 1 of 2 left" in out, out


def test_a_quorum_aware_delete_while_an_updated_member_is_away_is_caught(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "etcd-member-down.yaml")
    i = first(lines, lambda x: x["quorumAware"] and bool(acts(x, "DeletePod"))
              and ready(pod(x, acts(x, "DeletePod")[0]["name"])))
    victim = acts(lines[i], "DeletePod")[0]["name"]
    view = lines[i]["view"]
    view["set"]["spec"]["replicas"] = 5  # five members: quorum 3 survives the delete, so only the rejoin rule speaks
    update = view["set"]["status"]["updateRevision"]
    for ordinal, is_ready in ((3, True), (4, False)):
        member = copy.deepcopy(pod(lines[i], victim))
        member["metadata"]["name"] = f"etcd-{ordinal}"
        member["metadata"]["labels"] = {**member["metadata"]["labels"], "controller-revision-hash": update,
                                        "apps.kubernetes.io/pod-index": str(ordinal)}
        if not is_ready:
            unready(member)
        view["pods"].append(member)
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: quorum-rejoin: " in out and "updated member(s) etcd-4" in out, out


@pytest.mark.parametrize(("text", "words"), [
    ("{not json\n", ":1: not JSON"),
    ('{"log": "rollwise.dev/decision-log/v1", "controller": 5}\n', ":1: controller: want str, got int"),
    ('[1, 2]\n', ":1: (line): want a JSON object, got list"),
    ('{"verb": "create", "user": "u"}\n', ":1: resource: want str, got nothing"),
])
def test_a_malformed_line_exits_2_with_its_number(tmp_path: Path, text: str, words: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(tmp_path, text, capsys)
    assert (code, out) == (2, "") and words in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_a_malformed_line_after_clean_ones_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "rolling-update.yaml")
    lines[3]["view"]["pods"] = "web-0"
    code, out, err = check(tmp_path, lines, capsys)
    assert code == 2 and out == "" and ":4: view.pods: want list, got str" in err, err


def test_an_audit_log_with_a_second_create_and_no_delete_between_is_caught(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entry = {"time": 1.0, "user": "system:serviceaccount:kube-system:statefulset-controller", "namespace": "default",
             "resourceVersion": "1", "code": 201}
    log = [{**entry, "user": "admin", "verb": "create", "resource": "statefulsets.apps", "name": "web"},
           {**entry, "verb": "create", "resource": "pods", "name": "web-0"},
           {**entry, "verb": "delete", "resource": "pods", "name": "web-0", "code": 200},
           {**entry, "verb": "create", "resource": "pods", "name": "web-0"}]
    assert check(tmp_path, log, capsys)[0] == 0
    del log[2]  # the delete dropped: web-0 is created twice
    code, out, _ = check(tmp_path, log, capsys)
    assert code == 1 and ":3: one-pod-per-ordinal: pod default/web-0 created again" in out
    assert "line 2: system:serviceaccount" in out and "line 3:" in out
    log.append({**entry, "verb": "delete", "resource": "pods", "name": "db-0", "code": 200})
    code, out, _ = check(tmp_path, [log[0], log[1], log[-1]], capsys)
    assert code == 1 and ":3: foreign-write: " in out and "db-0" in out


def test_a_healthy_pod_deleted_under_the_template_it_was_created_for_is_caught(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "rolling-update.yaml")
    born = first(lines, lambda x: any(a["pod"]["metadata"]["name"] == "web-0" for a in acts(x, "CreatePod")))
    image = lines[born]["view"]["set"]["spec"]["template"]["spec"]["containers"][0]["image"]
    # All five up and the template as it was: the delete is within the budget, and for nothing.
    i = first(lines, lambda x: len(x["view"]["pods"]) == 5 and all(ready(p) for p in x["view"]["pods"])
              and x["view"]["set"]["spec"]["template"]["spec"]["containers"][0]["image"] == image)
    web0 = pod(lines[i], "web-0")
    lines[i]["actions"].append({"type": "DeletePod", "name": "web-0", "namespace": "default",
                                "uid": web0["metadata"]["uid"], "revision": "", "reason": "planted"})
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: no-churn: deleted web-0, which it created under this same template" in out
    assert f"line {born + 1}:" in out, "the line that created it shows it too"


def test_a_status_past_its_bounds_is_caught(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "rolling-update.yaml")
    i = first(lines, lambda x: any("replicas" in a["status"] for a in acts(x, "WriteStatus")))
    write = acts(lines[i], "WriteStatus")[0]
    write["status"]["readyReplicas"] = write["status"]["replicas"] + 1
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: status-bounds: " in out, out


def test_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check-trace", str(tmp_path / "none.jsonl")])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and "none.jsonl: No such file or directory" in err


def test_the_log_of_a_hooked_rollout_is_clean_and_a_delete_of_a_hooked_pod_is_caught(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = trace_of(tmp_path, EXAMPLES / "safer" / "pre-delete-hook.yaml")
    assert any(acts(x, "MarkPreparingDelete") for x in lines)
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 0, out
    i = first(lines, lambda x: bool(acts(x, "DeletePod")))
    victim = acts(lines[i], "DeletePod")[0]["name"]
    pod(lines[i], victim)["metadata"]["labels"]["example.com/drain"] = "pending"  # the agent had not released it
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: pre-delete-hook: {victim} deleted while it still carries its pre-delete hook " \
                         "(label example.com/drain=pending)" in out, out


def test_an_audit_log_where_two_controllers_delete_one_pod_is_caught(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    up_quorum = "system:serviceaccount:kube-system:quorum-aware-controller"
    entry = {"time": 1.0, "user": "system:serviceaccount:kube-system:statefulset-controller", "namespace": "default",
             "resourceVersion": "1", "code": 201}
    log = [{**entry, "user": "admin", "verb": "create", "resource": "statefulsets.apps", "name": "etcd"},
           {**entry, "verb": "create", "resource": "pods", "name": "etcd-0"},
           {**entry, "user": "op-a", "verb": "delete", "resource": "pods", "name": "etcd-0", "code": 200},
           {**entry, "verb": "create", "resource": "pods", "name": "etcd-0"},
           # a hand-over: the next incarnation is deleted by another controller, once
           {**entry, "user": up_quorum, "verb": "delete", "resource": "pods", "name": "etcd-0", "code": 200}]
    assert check(tmp_path, log, capsys)[0] == 0
    # Both controllers act on the first incarnation: the second delete is refused, and still a second actor.
    log.insert(3, {**entry, "user": up_quorum, "verb": "delete", "resource": "pods", "name": "etcd-0", "code": 409})
    code, out, _ = check(tmp_path, log, capsys)
    assert code == 1 and f":4: one-actor-per-object: {up_quorum} deletes pod default/etcd-0, which op-a" in out, out
    assert "line 3: op-a delete pods default/etcd-0" in out
