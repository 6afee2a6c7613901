"""compare, plan and demo: the rollout lab (spec/simulate.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rollwise.cli import main
from rollwise.cli.demo import DEMOS, example_path, run_demo_cases

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_compare_json_matches_the_individual_simulate_runs(capsys: pytest.CaptureFixture[str]) -> None:
    strategies = ["RollingUpdate", "Recreate", "EnforcedRollingUpdate"]
    assert main(["compare", str(EXAMPLES / "image-typo-fixed.yaml"), "--strategies", ",".join(strategies),
                 "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["strategy"] for r in runs] == strategies
    for strategy, run in zip(strategies, runs, strict=True):
        main(["simulate", str(EXAMPLES / "image-typo-fixed.yaml"), "--strategy", strategy, "--json"])
        single = json.loads(capsys.readouterr().out)
        assert run["summary"] == single["summary"]
        assert run["events"] == single["events"]
        assert run["apiWrites"] == single["apiWrites"]


def test_compare_table_names_each_strategy_and_says_why_one_is_stuck(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(EXAMPLES / "image-typo-fixed.yaml"),
                 "--strategies", "RollingUpdate,RollingUpdate:maxUnavailable=2,partition=0,Recreate"]) == 0
    out = capsys.readouterr().out
    assert "RollingUpdate:maxUnavailable=2,partition=0" in out and "Recreate" in out
    assert "stuck RollingUpdate / web: no progress for 300 s" in out


@pytest.mark.parametrize("strategies", ["Sideways", "RollingUpdate,Bogus", "", "RollingUpdate:speed=3"])
def test_compare_rejects_unknown_strategies_with_exit_2(strategies: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(EXAMPLES / "rolling-update.yaml"), "--strategies", strategies]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--strategies" in captured.err


def test_compare_rejects_an_invalid_scenario_with_its_field_path(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps:\n- scale: {name: web, replicas: -2}\n")
    assert main(["compare", str(bad), "--strategies", "RollingUpdate"]) == 2
    assert "steps[0].scale.replicas" in capsys.readouterr().err


def test_plan_on_a_stuck_rollout_names_the_stuck_pod_and_its_container_state(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLES / "image-typo-fixed.yaml"), "--at", "200"]) == 0
    out = capsys.readouterr().out
    assert "StatefulSet web at t=200 s" in out
    assert "waiting for web-3 to become available: container app is ImagePullBackOff" in out
    assert "next:" not in out


def test_plan_on_a_healthy_rollout_names_the_next_pod_to_delete(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLES / "rolling-update.yaml"), "--at", "45"]) == 0
    out = capsys.readouterr().out
    assert "next: delete pod web-3" in out


def test_plan_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    main(["plan", str(EXAMPLES / "rolling-update.yaml"), "--at", "45", "--json"])
    first = json.loads(capsys.readouterr().out)
    main(["plan", str(EXAMPLES / "rolling-update.yaml"), "--at", "45", "--json"])
    assert json.loads(capsys.readouterr().out) == first


def test_plan_shows_the_quorum_controllers_next_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLES / "etcd-member-down.yaml"), "--at", "88"]) == 0
    out = capsys.readouterr().out
    assert "quorum-aware-controller" in out
    assert "next: delete pod etcd-1" in out, "etcd-0 rejoined; a follower goes next, the leader etcd-2 last"


def test_every_demo_scenario_is_bundled_and_valid() -> None:
    for demo in DEMOS:
        assert example_path(demo.file).is_file(), demo.file
        assert main(["validate", str(example_path(demo.file))]) == 0


def test_demo_tells_each_story_with_its_figures() -> None:
    cases = {demo.file: runs for demo, runs in run_demo_cases()}
    typo = {r["strategy"]: r["summary"]["web"] for r in cases["image-typo-fixed.yaml"]}
    assert typo["RollingUpdate"]["completed"] is False
    assert typo["Recreate"]["completed"] and typo["EnforcedRollingUpdate"]["completed"]
    waves = {r["strategy"]: r["summary"]["web"] for r in cases["max-unavailable-6.yaml"]}
    assert waves["RollingUpdate:maxUnavailable=3"]["rolloutSeconds"] < waves[
        "RollingUpdate (maxUnavailable 1)"]["rolloutSeconds"]
    etcd = {r["strategy"]: r["summary"]["etcd"] for r in cases["etcd-member-down.yaml"]}
    assert etcd["RollingUpdate (1.34-1.36)"]["quorumLossSeconds"] > 0
    assert etcd["QuorumAware"]["quorumLossSeconds"] == 0
    assert etcd["QuorumAware"]["leaderChanges"] < etcd["RollingUpdate (1.37)"]["leaderChanges"]
    canary = cases["partitioned-canary.yaml"]
    assert all(r["summary"]["web"]["completed"] for r in canary)


def test_demo_command_prints_the_tables(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["demo", "--no-plots", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for demo in DEMOS:
        assert demo.file in out
    assert "QuorumAware" in out


def test_demo_draws_every_story_timeline_with_one_panel_per_variant(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for demo in DEMOS:
        path = tmp_path / f"{Path(demo.file).stem}.png"
        assert f"timeline: {path}" in out
        assert _png_text(path)["Description"] == f"panels={len(demo.variants)}"


def _png_text(path: Path) -> dict[str, str]:
    """The tEXt chunks of a PNG (the plot writes its panel count there)."""
    import struct
    import zlib

    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = {}, 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            out[key.decode()] = value.decode("latin-1")
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            out[key.decode()] = zlib.decompress(rest[1:]).decode("latin-1")
        pos += 12 + length
    return out


def test_compare_plot_has_one_panel_per_strategy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.png"
    assert main(["compare", str(EXAMPLES / "image-typo-fixed.yaml"), "--strategies",
                 "RollingUpdate,Recreate,EnforcedRollingUpdate", "--plot", str(out)]) == 0
    assert out.stat().st_size > 10_000
    assert _png_text(out)["Description"] == "panels=3"
    assert f"timeline written to {out}" in capsys.readouterr().out


def test_simulate_plot_has_one_panel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "one.png"
    assert main(["simulate", str(EXAMPLES / "rolling-update.yaml"), "--json", "--plot", str(out)]) == 0
    json.loads(capsys.readouterr().out)  # stdout stays pure JSON
    assert _png_text(out)["Description"] == "panels=1"
