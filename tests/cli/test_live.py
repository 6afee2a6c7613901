"""`rollwise simulate FILE --live [--speed N]`: a bundled story played in the view `rollwise get --watch` draws."""

from __future__ import annotations

import io
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from rollwise.api.meta import Obj
from rollwise.cli.live import run_live
from rollwise.projection import project
from rollwise.scenario.scenario import load_scenario
from rollwise.sim import Simulation

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "src/rollwise/examples/image-typo-fixed.yaml"


class FakeWall:
    """The wall clock the live view paces itself against: sleeping moves it, nothing else does."""

    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _story(strategy: str | None = None) -> object:
    scenario = load_scenario(STORY)
    if strategy is None:
        return scenario
    from rollwise.cli.options import load_with_overrides

    return load_with_overrides(str(STORY), feature_gates="", strategy=strategy)


def test_the_live_view_shows_the_stuck_pod_then_the_fix_at_n_times_virtual_speed() -> None:
    out = io.StringIO()
    wall = FakeWall()
    console = Console(file=out, force_terminal=True, color_system=None, width=160)
    result = run_live(_story("EnforcedRollingUpdate"), speed=10, console=console,  # type: ignore[arg-type]
                      clock=wall.clock, sleep=wall.sleep)
    text = out.getvalue()
    assert re.search(r"✖  web-3 .*rollout waits here: container app is ImagePullBackOff", text)
    assert "Status:      ✔ Healthy" in text.rsplit("image-typo-fixed: virtual time", 1)[1]
    assert result["summary"]["web"]["completed"] is True
    assert wall.now == pytest.approx(result["endedAt"] / 10, rel=0.01)  # the last instant shown at t / speed


def test_the_live_view_is_the_projection_of_the_simulated_objects() -> None:
    """Same view, same words: what the terminal shows for the simulated set is `project` of its objects."""
    sim = Simulation(_story())  # type: ignore[arg-type]
    sim.run(until=120.0)
    from rollwise.cli.live import sim_views
    from rollwise.cluster.resources import CONTROLLER_REVISION, POD, STATEFULSET

    (view,) = sim_views(sim, 120.0)
    sts: Obj = sim.cluster.get(STATEFULSET, "default", "web")
    direct = project(sts, kind="sts", pods=sim.cluster.list(POD, "default"),
                     revisions=sim.cluster.list(CONTROLLER_REVISION, "default"), now=120.0)
    assert view.pods == direct.pods
    assert view.waiting_on == "web-3"
    assert view.message.startswith("waiting for web-3")


def test_simulate_live_draws_in_place_in_tmux(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    socket = str(tmp_path / "tmux.sock")
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "rollwise", "simulate", str(STORY), "--live",
                                                 "--speed", "1000", "--strategy", "EnforcedRollingUpdate"])
    tmux = ["tmux", "-S", socket]
    subprocess.run([*tmux, "new-session", "-d", "-s", "live", "-x", "120", "-y", "50",
                    f"{command}; echo LIVE-ENDED; sleep 600"], check=True, timeout=60)
    try:
        screen = ""
        end = time.monotonic() + 120
        while time.monotonic() < end and "LIVE-ENDED" not in screen:
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-", "-t", "live"],
                                    capture_output=True, text=True, check=True, timeout=60).stdout
            time.sleep(0.1)
        assert "LIVE-ENDED" in screen, screen
        live = screen.split("image-typo-fixed  (strategy override")[0]
        assert live.count("Name:") == 1, live  # redrawn in place
        assert "Status:      ✔ Healthy" in live
        assert "Message:     rollout complete: 4 pods at revision" in live
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False, timeout=60)
