"""``rollwise lab etcd``: bad flags are refused before any process starts; the model side of each lab run."""

from __future__ import annotations

import pytest

from rollwise.cli import main
from rollwise.lab.experiment import run_model
from rollwise.lab.scenarios import SCENARIOS, STRATEGIES, LabTimings, set_manifest


@pytest.mark.parametrize(("argv", "flag"), [
    (["--scenarios", "dep07,bogus"], "--scenarios"),
    (["--strategies", "Sideways"], "--strategies"),
    (["--strategies", ""], "--strategies"),
    (["--start-seconds", "-1"], "--start-seconds"),
    (["--trials", "0"], "--trials"),
])
def test_lab_etcd_rejects_bad_flags_with_exit_2_and_nothing_on_stdout(argv: list[str], flag: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "etcd", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and flag in captured.err


@pytest.mark.parametrize("scenario", [name for name, sc in SCENARIOS.items() if sc.down])
def test_in_the_model_the_naive_order_loses_quorum_and_the_quorum_aware_orders_do_not(scenario: str) -> None:
    timings = LabTimings()
    legacy, _ = run_model(SCENARIOS[scenario], STRATEGIES["legacy"], timings)
    assert legacy.completed and legacy.quorum_lost
    assert legacy.outage_seconds >= (legacy.quorum_loss_seconds or 0) > 0  # no leader while lost, and electing
    for name in ("quorum", "quorum-auto"):
        figures, result = run_model(SCENARIOS[scenario], STRATEGIES[name], timings)
        assert figures.completed and not figures.quorum_lost and figures.outage_seconds == 0
        assert result["summary"]["etcd"]["podDeletions"] == SCENARIOS[scenario].replicas


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_lab_set_is_parallel_with_one_claim_per_member_and_its_strategy(strategy: str) -> None:
    sts = set_manifest(SCENARIOS["dep07"], STRATEGIES[strategy], LabTimings())
    assert sts["spec"]["podManagementPolicy"] == "Parallel"
    assert [t["metadata"]["name"] for t in sts["spec"]["volumeClaimTemplates"]] == ["data"]
    annotations = sts["metadata"].get("annotations") or {}
    quorum_aware = annotations.get("rollwise.dev/update-policy") == "QuorumAware"
    assert quorum_aware == strategy.startswith("quorum")
    assert (annotations.get("rollwise.dev/max-unavailable-members") == "auto") == (strategy == "quorum-auto")
    assert (annotations.get("rollwise.dev/leader-transfer") == "true") == (strategy == "quorum-transfer")


def test_in_the_model_leader_transfer_on_etcd_costs_one_transfer_time_where_etcds_own_hand_over_costs_none() -> None:
    timings = LabTimings()
    plain, _ = run_model(SCENARIOS["five"], STRATEGIES["quorum"], timings)
    moved, result = run_model(SCENARIOS["five"], STRATEGIES["quorum-transfer"], timings)
    assert plain.completed and moved.completed and not moved.quorum_lost
    assert plain.outage_seconds == 0 and moved.outage_seconds == moved.longest_gap_seconds == 0.1
    assert (plain.elections, moved.elections) == (1, 1)  # either hand-over is a new term, as on real etcd
    assert result["summary"]["etcd"]["leaderlessSeconds"] == 0.1
