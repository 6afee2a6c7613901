"""``rollwise lab etcd`` end to end on real etcd: one scenario, one strategy, one trial; the JSON document carries
the real figures, the quorum model replayed on the run's own pod timeline, and whether they agree."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from member_marks import needs_etcd

pytestmark = [
    *needs_etcd,
    pytest.mark.slow,  # a real etcd cluster's timing run; test_real_etcd_rollout.py keeps one in make test
]


def test_lab_etcd_json_reports_each_real_run_beside_the_model_replayed_on_its_timeline() -> None:
    out = subprocess.run([sys.executable, "-m", "rollwise", "lab", "etcd", "--scenarios", "dep07", "--strategies",
                          "rolling", "--start-seconds", "1", "--json"], capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    [run] = doc["runs"]
    assert run["scenario"] == "dep07" and run["strategy"] == "RollingUpdate (1.37)" and run["claimsKept"]
    [real], [replayed], [agrees] = run["real"], run["modelOnRealTimeline"], run["modelAgrees"]
    # The 1.37 order replaces the dead member first, so quorum is never lost: a loss would stall commits for at
    # least a member's restart (--start-seconds 1). What remains is the leader's own hand-over on shutdown, a
    # duration the lab's calibration measures over trials (tenths of a second here under load), not asserted as 0.
    assert real["completed"] and real["outage_seconds"] < doc["timings"]["start_seconds"] == 1
    assert set(replayed) == {"outage_seconds", "longest_gap_seconds", "elections", "leader_moves"}
    assert agrees == (abs(replayed["outage_seconds"] - real["outage_seconds"]) <= 0.5
                      and (replayed["elections"], replayed["leader_moves"]) == (real["elections"],
                                                                                real["leader_moves"]))
    assert doc["timings"]["join_election_seconds"] == 0.85
