"""``rollwise lab zookeeper|nats`` end to end on real members, as a user runs it: one scenario (DEP-07's: member 0
crash-looping, then a template change), the quorum-aware order, one trial. The JSON document names the store, the
rollout completes with every claim kept, the leader goes last (one election, one leader move), and every
acknowledged write is read back afterwards. NATS' meta leader
and its replicated stream hand over on shutdown, so writes never wait out an election (a naive order's quorum loss
stops them for seconds; a loaded machine may still delay one write past the lab's 0.2 s threshold)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rollwise.kubelet.process.stores import STORES

# Real members' timing runs, half a minute each: `make test-slow` (CI runs it); tests/apiserver/test_up_real_stores.py
# keeps the members themselves in `make test`.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("store", [pytest.param(name, marks=pytest.mark.skipif(
    STORES[name].binary() is None, reason=f"{name} is not installed")) for name in ("zookeeper", "nats")])
def test_a_store_lab_runs_dep07_under_quorum_aware_and_replaces_the_leader_last(store: str) -> None:
    out = subprocess.run([sys.executable, "-m", "rollwise", "lab", store, "--scenarios", "dep07", "--strategies",
                          "quorum", "--json"], capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["store"] == store
    [run] = doc["runs"]
    assert run["strategy"] == "QuorumAware" and run["claimsKept"]
    [real] = run["real"]
    assert real["completed"]
    assert (real["elections"], real["leader_moves"]) == (1, 1)
    # every write the store acknowledged was read back after the rollout
    assert run["acknowledgedWrites"][0] > 0 and run["lostWrites"] == [0] and run["lostWriteNumbers"] == [[]]
    if store == "nats":
        assert real["longest_gap_seconds"] < 0.5 and real["outage_seconds"] < 0.5
