"""Leader transfer end to end in the simulator: the example scenario under ``compare``'s two QuorumAware variants."""

from __future__ import annotations

from pathlib import Path

from rollwise.cli.options import load_with_overrides
from rollwise.sim import run_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "quorum" / "leader-transfer.yaml"


def _run(strategy: str) -> dict:
    return run_scenario(load_with_overrides(str(EXAMPLE), strategy=strategy))


def test_leader_transfer_cuts_a_five_member_rollouts_leaderless_time_to_a_quarter_or_less() -> None:
    before = _run("QuorumAware")["summary"]["store"]
    after = _run("QuorumAware:leaderTransfer=true")["summary"]["store"]
    assert before["completed"] and after["completed"]
    assert before["leaderlessSeconds"] == 1.5  # the election timeout once the leader stops
    assert after["leaderlessSeconds"] == 0.1  # one transfer time
    assert after["leaderlessSeconds"] <= before["leaderlessSeconds"] / 4
    assert after["quorumLossSeconds"] == before["quorumLossSeconds"] == 0
    assert after["leaderElections"] == 1  # the hand-over is a new term


def test_the_leader_goes_last_and_only_after_the_new_leader_is_shown() -> None:
    result = _run("QuorumAware:leaderTransfer=true")
    events = result["events"]
    asked = next(e for e in events if "asked to hand leadership to" in str(e.get("message", "")))
    led = next(e for e in events if e["type"] == "LeaderChanged" and e.get("pod") and e["t"] >= asked["t"])
    gone = next(e for e in events if e["type"] == "PodDeleteRequested" and e["pod"] == "store-0")
    assert asked["t"] < led["t"] <= gone["t"]
    assert [e["pod"] for e in events if e["type"] == "PodDeleteRequested"][-1] == "store-0"


def test_summaries_without_a_quorum_model_have_no_leaderless_figure() -> None:
    result = run_scenario(load_with_overrides(str(EXAMPLE.parents[1] / "rolling-update.yaml")))
    assert {fig["leaderlessSeconds"] for fig in result["summary"].values()} == {None}


def test_a_custom_kind_set_is_rolled_by_the_quorum_aware_controller_exactly_as_an_apps_v1_set(tmp_path: Path) -> None:
    custom = tmp_path / "leader-transfer-rsts.yaml"
    custom.write_text(EXAMPLE.read_text().replace("apiVersion: apps/v1", "apiVersion: apps.rollwise.dev/v1alpha1"))
    plain = _run("QuorumAware:leaderTransfer=true")
    result = run_scenario(load_with_overrides(str(custom), strategy="QuorumAware:leaderTransfer=true"))

    def deletes(run: dict) -> list[tuple[float, str]]:
        return [(e["t"], e["pod"]) for e in run["events"] if e["type"] == "PodDeleteRequested"]

    assert deletes(result) == deletes(plain) and deletes(result)[-1][1] == "store-0"
    assert result["summary"]["store"]["completed"] and result["summary"]["store"]["leaderlessSeconds"] == 0.1
