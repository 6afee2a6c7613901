"""`rollwise check-trace` judges quiescence (issue 38): a write equal to the object it replaces is a violation, and
so is a decision that writes on the world the controller's previous one left, before the time that one said time
alone changes something. The logs are the simulator's (`simulate --trace`), doctored as a noisy controller's would
read."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from test_check_trace import EXAMPLES, Line, acts, check, first, trace_of


def _status_only(line: Line) -> bool:
    return [a["type"] for a in line["actions"]] == ["WriteStatus"]


def _again(line: Line, later: float, *, stamp: str = "lastUpdateTime") -> Line:
    """The decision a controller makes ``later`` seconds after ``line`` on the world ``line`` left: the set's status
    is what ``line`` wrote, and it writes it again with a time in it moved on."""
    written = acts(line, "WriteStatus")[0]["status"]
    again = copy.deepcopy(line)
    again["time"] = again["view"]["now"] = line["view"]["now"] + later
    again["view"]["set"]["status"] = copy.deepcopy(written)
    moved = copy.deepcopy(written)
    for c in moved.get("conditions") or ():
        if c["type"] == "Progressing":
            c[stamp] = again["view"]["now"]
    again["actions"] = [{"type": "WriteStatus", "status": moved, "reason": "status changed"}]
    return again


def _logged(tmp: Path) -> tuple[list[Line], int]:
    lines = trace_of(tmp, EXAMPLES / "rolling-update.yaml")
    return lines, first(lines, _status_only)


def test_a_status_write_equal_to_the_status_read_is_a_violation(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    lines, i = _logged(tmp_path)
    lines[i]["view"]["set"]["status"] = copy.deepcopy(acts(lines[i], "WriteStatus")[0]["status"])
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1, out
    assert f":{i + 1}: quiescence: write status: equal to the object it replaces (a write without a change)" in out


def test_an_annotation_already_there_is_a_no_op_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines, i = _logged(tmp_path)
    target = lines[i]["view"]["pods"][0]
    target["metadata"].setdefault("annotations", {})["example.com/x"] = "1"
    lines[i]["actions"].insert(0, {"type": "AnnotatePod", "name": target["metadata"]["name"], "namespace": "default",
                                   "uid": target["metadata"]["uid"], "annotations": [["example.com/x", "1"]],
                                   "reason": "planted"})
    code, out, _ = check(tmp_path, lines, capsys)
    assert code == 1 and f":{i + 1}: quiescence: annotate pod {target['metadata']['name']}" in out, out


def test_a_write_on_the_world_the_last_decision_left_is_a_violation(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    lines, i = _logged(tmp_path)
    doctored = [*lines[:i + 1], _again(lines[i], 1.5)]
    code, out, _ = check(tmp_path, doctored, capsys)
    assert code == 1, out
    assert f":{i + 2}: quiescence: write status 1.5 s after a reconcile of the same world" in out
    assert f"  line {i + 1}: t=" in out and f"  line {i + 2}: t=" in out


def test_a_write_once_the_requeue_came_due_is_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines, i = _logged(tmp_path)
    lines[i]["requeueAfter"] = 5.0  # e.g. a pod becomes available then: time alone changes the status
    code, out, _ = check(tmp_path, [*lines[:i + 1], _again(lines[i], 5.0)], capsys)
    assert code == 0, out
    code, out, _ = check(tmp_path, [*lines[:i + 1], _again(lines[i], 4.0)], capsys)
    assert code == 1 and "quiescence: write status 4 s after" in out, out


def test_a_write_after_the_world_changed_is_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines, i = _logged(tmp_path)
    again = _again(lines[i], 1.5)
    pod: dict[str, Any] = again["view"]["pods"][0]
    pod["metadata"]["resourceVersion"] = "999999"  # the kubelet wrote the pod in between
    code, out, _ = check(tmp_path, [*lines[:i + 1], again], capsys)
    assert code == 0, out


def test_a_log_without_requeue_after_is_judged_by_the_first_form_only(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    lines, i = _logged(tmp_path)
    older = [{k: v for k, v in line.items() if k != "requeueAfter"} for line in [*lines[:i + 1], _again(lines[i], 1)]]
    code, out, _ = check(tmp_path, older, capsys)
    assert code == 0, out


def test_a_bad_requeue_after_is_a_malformed_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines, i = _logged(tmp_path)
    lines[i]["requeueAfter"] = "soon"
    code, out, err = check(tmp_path, json.dumps(lines[i]) + "\n", capsys)
    assert (code, out) == (2, "")
    assert err.strip().endswith(":1: requeueAfter: want a number of seconds, at least 0, or null, got 'soon'"), err
