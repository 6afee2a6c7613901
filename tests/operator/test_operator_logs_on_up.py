"""`rollwise run --log-format json` against `rollwise up`: every line is one JSON object, an action's line carries
the set, the action and the reason; /metrics has the client-request and process figures beside the queue's."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest
from kubectl_support import Up
from operator_support import WEB, Operator, rolled_out

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]


def test_json_logs_and_client_and_process_metrics(up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    op = Operator(up, tmp_path, "op-a", "--log-format", "json")
    try:
        port = op.wait_for(r"metrics on port (\d+)").group(1)
        op.wait_for(r"op-a started leading")
        up.apply(WEB)
        up.until(lambda: rolled_out(up, "web", 3, "nginx:1.27"), "the custom set runs three pods")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
            metrics = reply.read().decode()
    finally:
        assert op.stop() == 0
    while not op.lines.empty():
        op.log.append(op.lines.get())
    docs = [json.loads(line) for line in op.log]  # every line parses
    assert all({"time", "level", "msg"} <= d.keys() for d in docs)
    actions = [d for d in docs if d.get("action") == "CreatePod"]
    assert actions and all(d["set"] == "default/web" and d["reason"] for d in actions)
    assert not [d for d in docs if "('default'" in d["msg"]], "keys print as namespace/name"
    assert re.search(r'rest_client_requests_total\{code="200",host="127.0.0.1",method="GET"\} [1-9]', metrics)
    assert "rest_client_request_duration_seconds_bucket" in metrics
    assert re.search(r"process_resident_memory_bytes [0-9.e+]+", metrics)
    assert "workqueue_adds_total" in metrics
