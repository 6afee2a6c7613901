"""``rollwise lab patroni``: PostgreSQL under Patroni in the lab's store table, behind the same command as the other
stores: its role probe on the real set, the switchover offered as leader transfer, its model parameters (a deleted
primary costs an election, not a hand-over), and a real run end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from patroni_support import needs_patroni

from rollwise.cli import main
from rollwise.lab.experiment import run_model
from rollwise.lab.scenarios import SCENARIOS, STRATEGIES, set_manifest, strategies_for
from rollwise.lab.stores import LAB_STORES

PATRONI = LAB_STORES["patroni"]


def test_the_patroni_lab_offers_the_switchover_and_refuses_bad_flags_before_any_member_starts(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert "quorum-transfer" in strategies_for(PATRONI)
    assert main(["lab", "patroni", "--scenarios", "dep07,bogus"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--scenarios: Unsupported value: 'bogus'" in captured.err


def test_the_real_patroni_set_asks_each_member_s_rest_api_who_leads() -> None:
    real = set_manifest(SCENARIOS["dep07"], STRATEGIES["quorum"], PATRONI.timings, PATRONI)
    notes = real["metadata"]["annotations"]
    assert (notes["rollwise.dev/role-probe-port"], notes["rollwise.dev/role-probe-path"],
            notes["rollwise.dev/role-probe-leader-status-code"]) == ("8008", "/leader", "200")
    assert real["spec"]["template"]["spec"]["containers"][0]["image"] == "patroni:3.0"


def test_the_model_with_patroni_s_parameters_pays_an_election_when_the_primary_goes_last() -> None:
    """A deleted primary releases its key and a replica promotes: an election, which the model charges in full."""
    fig, _ = run_model(SCENARIOS["five"], STRATEGIES["quorum"], PATRONI.timings, PATRONI)
    assert fig.completed and (fig.elections, fig.leader_moves) == (1, 1)
    assert fig.outage_seconds == pytest.approx(PATRONI.timings.election_seconds, abs=0.05)


@pytest.mark.slow  # real members' timing run, about a minute: `make test-slow`
@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_patroni)])
def test_a_patroni_lab_run_replaces_the_primary_last_and_keeps_every_claim(_: None) -> None:
    # The switchover (quorum-transfer), not a failover: with asynchronous replication Patroni may promote a replica
    # up to maximum_lag_on_failover behind, so only a switchover promises that every acknowledged row is kept.
    out = subprocess.run([sys.executable, "-m", "rollwise", "lab", "patroni", "--scenarios", "dep07", "--strategies",
                          "quorum-transfer", "--json"], capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    [run] = doc["runs"]
    assert doc["store"] == "patroni" and run["claimsKept"]
    [real] = run["real"]
    assert real["completed"] and (real["elections"], real["leader_moves"]) == (1, 1)
    assert run["acknowledgedWrites"][0] > 0 and run["lostWrites"] == [0]  # every acknowledged row read back
