"""A set that has nothing to do writes its status once, not on every reconcile (issue 38, item 3): the operator
(`rollwise run` as a process) against `rollwise up`, its status writes counted from up's audit log over a window.

Three sets that wait: one settled, one paused (with a new template the pause holds back) and one whose pre-delete
hook is pending (two pods marked PreparingDelete, never released). Before the fix the paused one wrote its status
40-66 times a second (the Progressing condition's ``lastUpdateTime`` set to now on every reconcile, each write
waking the informer again) and the hooked one as often (its message embedding an unrounded elapsed time).

The operator's decision log (``--trace``) then passes ``rollwise check-trace``, whose quiescence rule finds a
decision that writes on the world the previous one left (before the fix: the paused set's second reconcile).

The window is a few seconds here (``QUIET_WINDOW_SECONDS`` widens it: 30 measures the issue's figure); the test
counts writes in it and asserts nothing about how long anything took."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up, hooked_set
from operator_support import (
    WEB,
    audit_entries,
    get_json,
    last_audit_time,
    leading_operator,
    rolled_out,
    running_up_for_operator,
)

from rollwise.cli import main

pytestmark = pytest.mark.kubectl

WINDOW = float(os.environ.get("QUIET_WINDOW_SECONDS", "3"))

HOOKED = hooked_set(strategy="{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}").replace("web", "db")
PAUSED = WEB.replace("web", "idle")


def _progressing(up: Up, name: str) -> dict[str, Any]:
    conditions = get_json(up, "rsts", name).get("status", {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == "Progressing"), {})


def _status_writes_since(up: Up, since: float, user: str) -> dict[str, int]:
    counts = {"web": 0, "idle": 0, "db": 0}
    for e in audit_entries(up):
        if e["time"] > since and e["user"] == user and e["resource"].startswith("statefulsets.") \
                and e["resource"].endswith("/status") and e["name"] in counts:
            counts[e["name"]] += 1
    return counts


def _new_image(up: Up, name: str) -> None:
    up.kubectl("patch", "rsts", name, "--type=merge", "-p", json.dumps(
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}}))


def test_settled_paused_and_hook_pending_sets_write_their_status_at_most_once_in_a_window(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "operator.jsonl"
    with running_up_for_operator(tmp_path) as up:
        up.install_rollwise()
        with leading_operator(up, tmp_path, "op-a", "--trace", str(trace)):
            for manifest in (WEB, PAUSED, HOOKED):
                up.apply(manifest)
            for name in ("web", "idle", "db"):
                up.until(lambda n=name: rolled_out(up, n, 3, "nginx:1.27"), f"{name} comes up through the operator")
            up.kubectl("patch", "rsts", "idle", "--type=merge", "-p", '{"spec":{"paused":true}}')
            _new_image(up, "idle")
            _new_image(up, "db")
            up.until(lambda: _progressing(up, "idle").get("reason") == "RolloutPaused"
                     and "pods stay at their revision" in _progressing(up, "idle").get("message", ""),
                     "Progressing says idle is paused with its pods held")
            up.until(lambda: "to be released by its pre-delete hook" in _progressing(up, "db").get("message", ""),
                     "Progressing names db's pending hook")
            since = last_audit_time(up)
            time.sleep(WINDOW)
            counts = _status_writes_since(up, since, "op-a")
    with capsys.disabled():
        print(f"\nstatus writes in {WINDOW:g} s: {counts}")
    assert counts["web"] <= 1, f"the settled set: {counts}"
    assert counts["idle"] <= 1, f"the paused set: {counts}"
    assert counts["db"] <= 1, f"the set whose pre-delete hook is pending: {counts}"
    capsys.readouterr()
    code = main(["check-trace", str(trace)])
    out = capsys.readouterr().out
    assert code == 0 and "no violation" in out, out
