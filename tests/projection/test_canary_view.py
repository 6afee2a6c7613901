"""Where a canary stands, as every face shows it (projection/canary.py, the terminal tree): the step and the run it
waits on, a timed pause's end as an absolute time, the stable revision, an abort and why. The set's status comes
from the real controller (the harness), the run's verdict is written as the AnalysisRun controller writes it."""

from __future__ import annotations

from typing import Any

from builders import make_set
from harness import Harness
from rich.console import Console

from rollwise.api.abort import aborted_status
from rollwise.api.meta import format_time
from rollwise.cli.treeview import render_view
from rollwise.projection import RolloutView, project

ANALYSIS = {"analysis": {"templates": [{"templateName": "error-rate"}]}}
FAILED = 'metric error-rate failed: result 0.12 matches failureCondition "result > 0.05"'


def _rolled(steps: list[dict[str, Any]]) -> Harness:
    h = Harness(make_set(replicas=4, policy="Parallel", strategy={
        "type": "RollingUpdate", "rollingUpdate": {"steps": steps}}))
    h.settle()
    h.set_image("nginx:2")
    h.settle()
    return h


def _view(h: Harness) -> RolloutView:
    return project(h.sts, kind="sts", pods=h.pods(), revisions=h.revisions(), now=h.now)


def _text(view: RolloutView) -> str:
    console = Console(width=200, no_color=True)
    with console.capture() as cap:
        console.print(render_view(view))
    return cap.get()


def _verdict(h: Harness, phase: str, message: str = "") -> None:
    (run,) = h.cluster.list("AnalysisRun.apps.rollwise.dev", "default")
    h.cluster.update_status({**run, "status": {"phase": phase, **({"message": message} if message else {})}})
    h.sync()


def test_an_analysis_step_shows_its_run_and_phase_and_the_stable_revision() -> None:
    h = _rolled([{"replicas": 1}, ANALYSIS, {"replicas": 2}, {"pause": {}}])
    stable, update = h.status()["currentRevision"], h.status()["updateRevision"]
    _verdict(h, "Running")
    view = _view(h)
    assert view.canary is not None
    assert view.canary.step == f"step 2/4 analysis {update}-1 Running"
    assert view.canary.stable == stable and view.canary.abort == ""
    text = _text(view)
    assert f"Steps:       step 2/4 analysis {update}-1 Running" in text
    assert f"Stable:      {stable}" in text and "Aborted:" not in text
    assert view.to_json()["canary"]["step"] == view.canary.step  # the dashboard's wire form


def test_a_timed_pause_shows_when_it_ends_not_how_long_is_left() -> None:
    h = _rolled([{"replicas": 1}, {"pause": {"duration": "5m"}}])
    start = h.status()["pauseStartTime"]
    view = _view(h)
    assert view.canary is not None and view.canary.step == f"step 2/2 pause 300s, until {format_time(start + 300)}"
    h.now += 10
    assert _view(h).canary == view.canary  # the same words a second later: nothing counts down


def test_an_aborted_canary_shows_the_failed_run_and_why() -> None:
    h = _rolled([{"replicas": 2}, ANALYSIS])
    stable, update = h.status()["currentRevision"], h.status()["updateRevision"]
    _verdict(h, "Failed", FAILED)
    h.settle()
    view = _view(h)
    assert view.canary is not None
    assert view.canary.step == f"aborted at analysis {update}-1 Failed: {FAILED}"
    assert view.canary.abort == f"aborted by analysis run {update}-1 (Failed): {FAILED}"
    assert view.canary.stable == stable and view.state == "Degraded"
    assert f"Aborted:     aborted by analysis run {update}-1 (Failed): {FAILED}" in _text(view)


def test_an_abort_by_hand_and_a_finished_rollout_say_so() -> None:
    h = _rolled([{"replicas": 1}, {"pause": {}}])
    h.cluster.update_status({**h.sts, "status": aborted_status(h.sts)})
    h.settle()
    view = _view(h)
    assert view.canary is not None
    assert (view.canary.step, view.canary.abort) == ("aborted", "aborted by rollwise rollout abort")
    done = _view(_rolled([{"replicas": 1}, {"replicas": 2}]))
    assert done.canary is not None and done.canary.step == "2 steps; no rollout under way"


def test_a_set_without_steps_has_no_canary_row() -> None:
    h = Harness(make_set(replicas=2))
    h.settle()
    assert _view(h).canary is None and "Steps:" not in _text(_view(h))
