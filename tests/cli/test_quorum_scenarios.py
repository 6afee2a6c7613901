"""Quorum-aware updates through ``rollwise simulate`` (seed 001, DEP-07), against the rolling update."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "etcd-member-down.yaml"
SCENARIOS = ROOT / "tests" / "scenarios"


def run(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> dict[str, Any]:
    code = main(["simulate", str(path), "--json", *args])
    assert code == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def deletions(result: dict[str, Any], after: float = 0.0) -> list[tuple[str, str]]:
    return [(e["pod"], e["by"]) for e in result["events"] if e["type"] == "PodDeleteRequested" and e["t"] >= after]


def leader_at(result: dict[str, Any], t: float) -> str | None:
    leader = None
    for e in result["events"]:
        if e["type"] == "LeaderChanged" and e["t"] <= t:
            leader = e["pod"]
    return leader


def test_quorum_aware_replaces_the_dead_member_first_and_the_leader_last(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, EXAMPLE, "--strategy", "QuorumAware")
    etcd = result["summary"]["etcd"]
    assert etcd["completed"] is True
    assert etcd["quorumLossSeconds"] == 0
    order = [pod for pod, _ in deletions(result)]
    assert order[0] == "etcd-0", "the member already down goes first (step 2)"
    start = next(e["t"] for e in result["events"] if e["type"] == "Step" and e["action"] == "patch")
    assert order[-1] == leader_at(result, start), "the leader goes last (step 4)"
    reasons = {e["reason"] for e in result["events"] if e["type"] == "Event"}
    assert {"QuorumAwareDelete", "QuorumAwareWaiting"} <= reasons
    conditions = result["final"]["statefulSets"][0]["status"]["conditions"]
    assert any(c["type"] == "AllMembersUpdated" and c["status"] == "True" for c in conditions)


def test_legacy_rolling_update_deletes_a_healthy_member_first_and_loses_quorum(
        capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, EXAMPLE, "--strategy", "RollingUpdate", "--feature-gates", "MaxUnavailableStatefulSet=false")
    assert deletions(result)[0][0] == "etcd-2"
    assert result["summary"]["etcd"]["quorumLossSeconds"] > 0
    assert any(e["type"] == "QuorumLost" for e in result["events"])


def test_fixed_rolling_update_replaces_the_dead_member_first_but_takes_the_leader_in_ordinal_order(
        capsys: pytest.CaptureFixture[str]) -> None:
    rolling = run(capsys, EXAMPLE, "--strategy", "RollingUpdate")
    quorum = run(capsys, EXAMPLE, "--strategy", "QuorumAware")
    assert [p for p, _ in deletions(rolling)] == ["etcd-0", "etcd-2", "etcd-1"]
    assert rolling["summary"]["etcd"]["quorumLossSeconds"] == 0
    assert rolling["summary"]["etcd"]["leaderChanges"] > quorum["summary"]["etcd"]["leaderChanges"]


@pytest.mark.parametrize("name", ["etcd-five-two-down", "etcd-template-change-mid-rollout",
                                  "etcd-handover-from-rolling", "etcd-single"])
def test_quorum_scenarios_meet_their_expectations(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(SCENARIOS / f"{name}.yaml"), "--json"]) == 0, capsys.readouterr().err


def test_five_members_with_two_down_replace_the_dead_ones_first(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, SCENARIOS / "etcd-five-two-down.yaml")
    assert sorted(p for p, _ in deletions(result)[:2]) == ["etcd-1", "etcd-3"]


def test_a_hand_over_from_rolling_update_never_deletes_an_updated_pod(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, SCENARIOS / "etcd-handover-from-rolling.yaml")
    pods = [p for p, _ in deletions(result)]
    assert sorted(pods) == [f"etcd-{i}" for i in range(5)], "each pod replaced exactly once"
    assert {by for _, by in deletions(result)} == {"statefulset-controller", "quorum-aware-controller"}


def test_lease_lag_lets_a_fresh_leader_pass_for_a_follower(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    lagged = run(capsys, SCENARIOS / "etcd-lease-lag.yaml")
    prompt_file = tmp_path / "prompt.yaml"
    prompt_file.write_text((SCENARIOS / "etcd-lease-lag.yaml").read_text().replace("leaseLagSeconds: 15",
                                                                                    "leaseLagSeconds: 0"))
    prompt = run(capsys, prompt_file)
    assert lagged["summary"]["etcd"]["leaderChanges"] >= 2
    assert prompt["summary"]["etcd"]["leaderChanges"] == 1, "with prompt Leases the leader goes last, once"
    deleted_leader = [e for e in lagged["events"] if e["type"] == "PodDeleteRequested" and e["t"] == 40.0]
    assert deleted_leader and leader_at(lagged, 39.9) == deleted_leader[0]["pod"] == "etcd-2"
    assert prompt["summary"]["etcd"]["completed"] is True


def test_a_quorum_set_reports_its_figures_only_for_quorum_models(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, EXAMPLE)
    assert result["summary"]["etcd"]["quorumLossSeconds"] is not None
    plain = run(capsys, ROOT / "examples" / "rolling-update.yaml")
    assert plain["summary"]["web"]["quorumLossSeconds"] is None
    leases = [e for e in result["events"] if e["type"] == "LeaderChanged"]
    assert leases, "the model reports leader changes"
