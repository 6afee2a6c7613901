"""``--plot``: pod states rebuilt from the event stream, quorum marks, and the PNG the timeline plot writes."""

from __future__ import annotations

import importlib
import struct
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from bundled import SCENARIO_FILES

from rollwise.cli.quorum_marks import QuorumMarks, quorum_marks
from rollwise.cli.timeline import (
    FAILING,
    MISSING,
    PENDING,
    READY,
    RUNNING,
    TERMINATING,
    Series,
    pod_intervals,
    rollout_peak,
    state_counts,
    sum_series,
    unavailable_counts,
    unavailable_series,
)
from rollwise.sim import load_scenario, parse_scenario, run_scenario

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = SCENARIO_FILES

OLD, NEW = "web-aaa", "web-bbb"


def plot() -> ModuleType:
    """``rollwise.cli.plot``, imported by the tests that draw: matplotlib costs each test worker 1.6 s at
    collection otherwise."""
    return importlib.import_module("rollwise.cli.plot")


def plot_timelines(*args: Any, **kw: Any) -> Any:
    return plot().plot_timelines(*args, **kw)


def timeline_figure(*args: Any, **kw: Any) -> Any:
    return plot().timeline_figure(*args, **kw)


def ev(t: float, kind: str, pod: str | None = None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"t": t, "type": kind, **fields}
    if pod is not None:
        out["pod"] = pod
    return out


def created(t: float, pod: str, revision: str = OLD, **fields: Any) -> dict[str, Any]:
    ordinal = int(pod.rsplit("-", 1)[1])
    return ev(t, "PodCreated", pod, ordinal=ordinal, revision=revision, by="statefulset-controller", **fields)


def result(events: list[dict[str, Any]], *, ended: float, name: str = "web", update: str = NEW,
           scenario: str = "hand-built", strategy: str | None = None, spec: dict[str, Any] | None = None,
           summary: dict[str, Any] | None = None) -> dict[str, Any]:
    sts: dict[str, Any] = {"name": name, "status": {"updateRevision": update}}
    if spec is not None:
        sts["spec"] = spec
    return {"scenario": scenario, "strategy": strategy, "endedAt": ended, "events": events,
            "summary": summary if summary is not None else
            {name: {"completed": True, "rolloutSeconds": 30.0, "maxUnavailableObserved": 1,
                    "quorumLossSeconds": None}},
            "apiWrites": 0, "metrics": {}, "final": {"statefulSets": [sts], "pods": []}}


def bring_up(pods: list[str], revision: str = OLD) -> list[dict[str, Any]]:
    """Parallel start: created at 0, running at 5, Ready at 7."""
    return ([created(0, p, revision) for p in pods] + [ev(5, "PodRunning", p) for p in pods]
            + [ev(7, "PodReady", p) for p in pods])


def replace(pod: str, t: float, revision: str = NEW) -> list[dict[str, Any]]:
    """Delete at t, gone at t+3, recreated at once, running at t+8, Ready at t+10."""
    return [ev(t, "PodDeleteRequested", pod, revision=OLD, by="statefulset-controller"), ev(t + 3, "PodGone", pod),
            created(t + 3, pod, revision), ev(t + 8, "PodRunning", pod), ev(t + 10, "PodReady", pod)]


def rolling_update() -> dict[str, Any]:
    """Three pods replaced from the top, one at a time, a template patch at t=10."""
    events = [*bring_up(["web-0", "web-1", "web-2"]), ev(10, "Step", index=1, action="patch"),
              *replace("web-2", 10), *replace("web-1", 20), *replace("web-0", 30)]
    return result(events, ended=45, strategy="RollingUpdate")


def stuck_rollout() -> dict[str, Any]:
    """The new image cannot be pulled: the replaced top pod waits in ImagePullBackOff until the end."""
    events = [*bring_up(["web-0", "web-1", "web-2"]), ev(10, "Step", index=1, action="patch"),
              ev(10, "PodDeleteRequested", "web-2", revision=OLD, by="statefulset-controller"),
              ev(13, "PodGone", "web-2"), created(13, "web-2", NEW),
              ev(13, "ContainerWaiting", "web-2", container="app", reason="ContainerCreating"),
              ev(18, "ContainerWaiting", "web-2", container="app", reason="ErrImagePull"),
              ev(19, "ContainerWaiting", "web-2", container="app", reason="ImagePullBackOff")]
    return result(events, ended=100, strategy="RollingUpdate:maxUnavailable=1",
                  summary={"web": {"completed": False, "rolloutSeconds": None, "maxUnavailableObserved": 1}})


def quorum_run() -> dict[str, Any]:
    """etcd-0 leads; two members crash so quorum is lost from 20 to 30; etcd-1 is elected at 31."""
    pods = ["etcd-0", "etcd-1", "etcd-2"]
    events = ([created(0, p, "etcd-aaa") for p in pods] + [ev(5, "PodRunning", p) for p in pods]
              + [ev(7, "PodReady", p) for p in pods] + [ev(8, "LeaderChanged", "etcd-0"),
                 ev(20, "Step", index=1, action="podFault"),
                 ev(20, "PodNotReady", "etcd-0"), ev(20, "PodNotReady", "etcd-2"), ev(20, "PodNotReady", "etcd-1"),
                 ev(20, "QuorumLost"), {**ev(20, "LeaderChanged"), "pod": None},
                 ev(30, "PodReady", "etcd-0"), ev(30, "PodReady", "etcd-1"), ev(30, "PodReady", "etcd-2"),
                 ev(30, "QuorumRestored"), ev(31, "LeaderChanged", "etcd-1")])
    return result(events, ended=50, name="etcd", update="etcd-aaa", strategy="QuorumAware",
                  summary={"etcd": {"completed": True, "rolloutSeconds": None, "maxUnavailableObserved": 3,
                                    "quorumLossSeconds": 10.0}})


def many_pods(n: int) -> dict[str, Any]:
    pods = [f"web-{i}" for i in range(n)]
    events = [*bring_up(pods), ev(10, "Step", index=1, action="patch")]
    for i, pod in enumerate(reversed(pods)):
        events += replace(pod, 10 + i * 10)
    events.sort(key=lambda e: e["t"])
    return result(events, ended=10 + n * 10 + 20)


def png_text(path: Path) -> dict[str, str]:
    """The PNG's tEXt/iTXt chunks, read with the stdlib (PIL is not a dependency)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = {}, 8
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + body)
        if kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            flag, rest = rest[0], rest[2:]
            _lang, _, rest = rest.partition(b"\0")
            _tkey, _, value = rest.partition(b"\0")
            out[key.decode("latin-1")] = (zlib.decompress(value) if flag else value).decode()
        pos += 12 + length
    return out


# -- state reconstruction ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("ordinal", "expected"), [
    (2, [(0, 5, PENDING, False), (5, 7, RUNNING, False), (7, 10, READY, False), (10, 13, TERMINATING, False),
         (13, 18, PENDING, True), (18, 20, RUNNING, True), (20, 45, READY, True)]),
    (1, [(0, 5, PENDING, False), (5, 7, RUNNING, False), (7, 20, READY, False), (20, 23, TERMINATING, False),
         (23, 28, PENDING, True), (28, 30, RUNNING, True), (30, 45, READY, True)]),
    (0, [(0, 5, PENDING, False), (5, 7, RUNNING, False), (7, 30, READY, False), (30, 33, TERMINATING, False),
         (33, 38, PENDING, True), (38, 40, RUNNING, True), (40, 45, READY, True)]),
], ids=["web-2", "web-1", "web-0"])
def test_rolling_update_lanes_go_old_ready_terminating_then_new_pending_running_ready(
        ordinal: int, expected: list[tuple[Any, ...]]) -> None:
    assert pod_intervals(rolling_update())["web"][ordinal] == expected


def test_image_pull_errors_are_failing_until_the_end_and_the_pod_counts_as_new() -> None:
    lanes = pod_intervals(stuck_rollout())["web"]
    assert lanes[2] == [(0, 5, PENDING, False), (5, 7, RUNNING, False), (7, 10, READY, False),
                        (10, 13, TERMINATING, False), (13, 18, PENDING, True), (18, 100, FAILING, True)]
    assert lanes[0] == [(0, 5, PENDING, False), (5, 7, RUNNING, False), (7, 100, READY, False)]


def _one_pod(*tail: dict[str, Any], first: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return result([first or created(0, "web-0", NEW), *tail], ended=kw.pop("ended", 50), **kw)


@pytest.mark.parametrize(("doc", "expected"), [
    (_one_pod(ev(5, "PodRunning", "web-0"), ev(8, "ContainerWaiting", "web-0", reason="CrashLoopBackOff"),
              ev(20, "PodReady", "web-0")),
     {"web": {0: [(0, 5, PENDING, True), (5, 8, RUNNING, True), (8, 20, FAILING, True), (20, 50, READY, True)]}}),
    (_one_pod(ev(0, "ContainerWaiting", "web-0", reason="ContainerCreating"), ev(5, "PodRunning", "web-0")),
     {"web": {0: [(0, 5, PENDING, True), (5, 50, RUNNING, True)]}}),
    (_one_pod(ev(5, "PodRunning", "web-0"), ev(7, "PodReady", "web-0"), ev(9, "PodNotReady", "web-0"),
              ev(9, "PodFailed", "web-0"), ev(12, "PodDeleteRequested", "web-0", by="statefulset-controller")),
     {"web": {0: [(0, 5, PENDING, True), (5, 7, RUNNING, True), (7, 9, READY, True), (9, 12, FAILING, True),
                  (12, 50, TERMINATING, True)]}}),
    (_one_pod(ev(5, "PodRunning", "my-db-12"), first=ev(0, "PodCreated", "my-db-12", revision=NEW), name="my-db"),
     {"my-db": {12: [(0, 5, PENDING, True), (5, 50, RUNNING, True)]}}),
    (_one_pod(ev(4, "PodDeleteRequested", "web-0", by="user"), ev(6, "PodGone", "web-0")),
     {"web": {0: [(0, 4, PENDING, True), (4, 6, TERMINATING, True), (6, 50, MISSING, False)]}}),
    (_one_pod(ev(3, "Step", index=2, action="scale"), ev(4, "PodDeleteRequested", "web-0", by="sts"),
              ev(6, "PodGone", "web-0")),
     {"web": {0: [(0, 4, PENDING, True), (4, 6, TERMINATING, True)]}}),
    (_one_pod(ev(4, "PodDeleteRequested", "web-0", by="sts"), ev(6, "PodGone", "web-0"),
              spec={"replicas": 0}),
     {"web": {0: [(0, 4, PENDING, True), (4, 6, TERMINATING, True)]}}),
], ids=["crash-loop-after-running-is-failing-until-ready", "container-creating-is-pending-not-failing",
        "phase-failed-is-failing-until-deletion", "ordinal-and-set-from-name-suffix-when-event-has-no-ordinal",
        "deleted-never-recreated-without-scale-step-stays-missing", "scale-step-before-deletion-leaves-range",
        "final-spec-replicas-decides-the-range"])
def test_pod_intervals_rebuild_each_state_from_its_events(doc: dict[str, Any], expected: dict[str, Any]) -> None:
    assert pod_intervals(doc) == expected


def test_hole_below_a_live_ordinal_stays_missing_even_after_a_scale_step() -> None:
    events = [*bring_up(["web-0", "web-1"]), ev(10, "Step", index=1, action="scale"),
              ev(10, "PodDeleteRequested", "web-0", by="user"), ev(12, "PodGone", "web-0")]
    assert pod_intervals(result(events, ended=30))["web"][0][-1] == (12, 30, MISSING, False)


def test_new_revision_falls_back_to_the_last_created_pod_when_final_is_absent() -> None:
    doc = rolling_update()
    del doc["final"]
    assert pod_intervals(doc)["web"][0][-1] == (40, 45, READY, True)


def test_unavailable_counts_missing_and_not_ready_ordinals_as_steps() -> None:
    doc = rolling_update()
    assert unavailable_counts(pod_intervals(doc)["web"], 45) == ([0, 7, 10, 40, 45], [3, 0, 1, 0, 0])


def test_state_counts_add_up_to_the_ordinals_in_range_at_every_step() -> None:
    times, counts = state_counts(pod_intervals(many_pods(100))["web"], 1030)
    assert {sum(c[i] for c in counts.values()) for i in range(len(times) - 1)} == {100}
    assert counts[(READY, True)][-1] == 100


def test_quorum_marks_give_outage_band_leader_tenures_and_changes() -> None:
    assert quorum_marks(quorum_run()) == {"etcd": QuorumMarks(
        lost=((20, 30),), leaders=((8, 20, "etcd-0"), (31, 50, "etcd-1")),
        changes=((8, "etcd-0"), (20, None), (31, "etcd-1")))}


def test_quorum_marks_are_empty_without_quorum_events() -> None:
    assert quorum_marks(rolling_update()) == {}


# -- the PNG -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("docs", "panels"), [
    ([rolling_update()], 1),
    ([rolling_update(), stuck_rollout(), quorum_run()], 3),
], ids=["simulate-one-panel", "compare-three-panels"])
def test_plot_writes_a_png_whose_metadata_counts_the_panels(tmp_path: Path, docs: list[dict[str, Any]],
                                                            panels: int) -> None:
    out = plot_timelines(docs, tmp_path / "deep" / "dir" / "plot.png")
    assert out == tmp_path / "deep" / "dir" / "plot.png"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 20_000
    assert png_text(out)["Description"] == f"panels={panels}"


def test_more_than_sixty_ordinals_switch_to_the_aggregated_view(tmp_path: Path) -> None:
    meta = png_text(plot_timelines([many_pods(100), rolling_update()], tmp_path / "big.png"))
    assert meta["Comment"].startswith("views=web=aggregated;web=lanes ")


@pytest.mark.parametrize(("ended", "axis_end"), [(48, 48), (1200, 45)],
                         ids=["busy-until-the-end-shows-the-whole-run", "long-idle-tail-is-cut-after-the-last-change"])
def test_time_axis_ends_at_the_run_end_or_shortly_after_the_last_change(tmp_path: Path, ended: float,
                                                                         axis_end: float) -> None:
    doc = rolling_update()
    doc["endedAt"] = ended
    meta = png_text(plot_timelines([doc], tmp_path / "axis.png"))
    assert meta["Comment"].endswith(f"axisEnd={axis_end:g}")


def test_a_run_without_pods_still_gets_its_panel(tmp_path: Path) -> None:
    doc = {"scenario": "nothing", "endedAt": 30.0, "events": [ev(0, "Step", index=0, action="after")]}
    meta = png_text(plot_timelines([doc], tmp_path / "empty.png"))
    assert (meta["Description"], meta["Comment"]) == ("panels=1", "views=(no pods)=lanes axisEnd=5")


def test_titles_override_panel_names_and_must_match_the_results(tmp_path: Path) -> None:
    docs = [rolling_update(), stuck_rollout()]
    for doc in docs:
        doc["scenario"] = f"scenario-{id(doc)}"
    meta = png_text(plot_timelines(docs, tmp_path / "t.png", titles=["before", "after"]))
    assert meta["Title"] == "before vs after"
    with pytest.raises(ValueError, match="1 titles for 2 results"):
        plot_timelines(docs, tmp_path / "u.png", titles=["only one"])


def test_empty_input_raises_a_clear_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no results to plot"):
        plot_timelines([], tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()


# -- the unavailable panel: the recorder's count, scaled to the rollout -------------------------------------------


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_recorded_unavailable_series_peaks_at_the_summary_figure(path: Path) -> None:
    doc = run_scenario(load_scenario(path))
    for name, figures in doc["summary"].items():
        series = unavailable_series(doc, name, {}, doc["endedAt"])
        assert series.recorded
        assert rollout_peak(series) == figures["maxUnavailableObserved"], name


def _set_scenario(replicas: int, steps: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {"name": "samples", "kubelet": {"startSeconds": 5, "readySeconds": 2, "terminationSeconds": 10},
            "objects": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
                         "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                                  "template": {"metadata": {"labels": {"app": "web"}},
                                               "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
                                  **spec}}],
            "steps": steps}


def _count_at(series: Series, t: float) -> int:
    return [n for at, n in zip(series.times, series.counts, strict=True) if at <= t][-1]


def test_ordinals_without_a_pod_count_as_unavailable_from_the_first_instant() -> None:
    doc = run_scenario(parse_scenario(_set_scenario(4, [{"after": 60}])))
    series = unavailable_series(doc, "web", pod_intervals(doc)["web"], doc["endedAt"])
    assert (series.times[0], series.counts[0]) == (0.0, 4)  # web-0 pending, web-1..3 not created yet
    assert _count_at(series, 59) == 0
    lanes = pod_intervals(doc)["web"]
    assert [lanes[o][0][2:] for o in range(4)] == [(PENDING, True)] + [(MISSING, False)] * 3
    assert [lanes[o][0].start for o in range(4)] == [0, 0, 0, 0]  # the lanes show what the count counts


def test_ordinals_scaled_away_are_not_missing_and_come_back_missing_until_recreated() -> None:
    steps = [{"after": 40}, {"scale": {"name": "web", "replicas": 1}}, {"after": 40},
             {"scale": {"name": "web", "replicas": 3}}, {"after": 40}]
    doc = run_scenario(parse_scenario(_set_scenario(3, steps)))  # OrderedReady: web-2 waits for web-1
    lane = pod_intervals(doc)["web"][2]
    assert [iv.state for iv in lane] == [MISSING, PENDING, RUNNING, READY, TERMINATING,
                                         MISSING, PENDING, RUNNING, READY]
    assert lane[5].start > lane[4].end  # out of range in between: neither a pod nor missing
    assert lane[0].start == 0 and lane[5].start == 80


def test_terminating_pods_above_a_scaled_down_range_are_not_counted() -> None:
    steps = [{"after": 30}, {"scale": {"name": "web", "replicas": 1}}, {"after": 60}]
    doc = run_scenario(parse_scenario(_set_scenario(3, steps, podManagementPolicy="Parallel")))
    lanes = pod_intervals(doc)["web"]
    series = unavailable_series(doc, "web", lanes, doc["endedAt"])
    assert lanes[2][-1].state == TERMINATING  # web-2 takes 10 s to go
    assert _count_at(series, lanes[2][-1].start + 1) == 0
    assert unavailable_counts(lanes, doc["endedAt"])[1] != series.counts  # what the lanes alone would have drawn


def test_rollout_peak_starts_from_the_sample_in_force_when_the_template_changed() -> None:
    """Ready at t=40 and patched at t=40, in a later instant: the bring-up's count, sampled at t=40 too, is not the
    rollout's, though the two share a time."""
    steps = [{"waitFor": {"ready": "web", "timeout": 1000}},
             {"patch": {"kind": "StatefulSet", "name": "web",
                        "merge": {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "v2"}]}}}}}},
             {"waitFor": {"rolloutComplete": "web", "timeout": 1000}}]
    scenario = _set_scenario(10, steps, podManagementPolicy="Parallel",
                             updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}})
    doc = run_scenario(parse_scenario(scenario))
    series = unavailable_series(doc, "web", {}, doc["endedAt"])
    assert series.times[series.measured_index] == series.measured_from  # sampled at the instant of the patch
    assert max(series.counts[:series.measured_index]) == 10
    assert rollout_peak(series) == doc["summary"]["web"]["maxUnavailableObserved"] == 2


def test_a_document_without_samples_falls_back_to_the_lanes() -> None:
    doc = rolling_update()
    series = unavailable_series(doc, "web", pod_intervals(doc)["web"], 45)
    assert (series.recorded, series.times, series.counts) == (False, [0, 7, 10, 40, 45], [3, 0, 1, 0, 0])


def test_sum_series_adds_step_functions_and_measures_from_the_earliest_start() -> None:
    total = sum_series([Series([0, 10, 20], [5, 0, 1], measured_from=20, measured_index=2),
                        Series([0, 15, 30], [5, 1, 0], measured_from=15, measured_index=1)])
    assert (total.times, total.counts, total.measured_index) == ([0, 10, 15, 20, 30], [10, 5, 1, 2, 1], 2)
    assert rollout_peak(total) == 2


def _unavailable_axes(fig: Any, name: str) -> Any:
    (line,) = fig.findobj(lambda a: a.get_gid() == f"unavailable:{name}")
    return line


def _rollout_doc(replicas: int) -> dict[str, Any]:
    steps = [{"waitFor": {"ready": "web", "timeout": 10000}},
             {"patch": {"kind": "StatefulSet", "name": "web",
                        "merge": {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "v2"}]}}}}}},
             {"waitFor": {"rolloutComplete": "web", "timeout": 10000}}]
    return run_scenario(parse_scenario(_set_scenario(replicas, steps)))


@pytest.mark.parametrize(("replicas", "clipped"), [(4, False), (40, True)],
                         ids=["small-set-bring-up-fits-the-scale", "big-bring-up-is-clipped-to-the-rollout"])
def test_unavailable_panel_draws_the_recorded_counts_scaled_to_the_rollout(replicas: int, clipped: bool) -> None:
    doc = _rollout_doc(replicas)
    fig, _ = timeline_figure([doc])
    line = _unavailable_axes(fig, "web")
    samples = doc["samples"]["web"]["unavailable"]
    drawn = list(zip(line.get_xdata(), line.get_ydata(), strict=True))
    assert drawn[:len(samples)] == [(t, n) for t, n in samples]
    top = line.axes.get_ylim()[1]
    assert doc["summary"]["web"]["maxUnavailableObserved"] == 1 < top
    assert bool(top < replicas) is clipped
    notes = [t.get_text() for t in line.axes.texts if t.get_text().startswith("before the rollout")]
    assert notes == ([f"before the rollout: up to {replicas} unavailable (clipped; the scale is the rollout's)"]
                     if clipped else [])


# -- aggregation and labels ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("above", "view"), [(0, "lanes"), (1, "aggregated")])
def test_lanes_aggregate_once_they_would_be_thinner_than_a_readable_line(above: int, view: str) -> None:
    assert plot().AGGREGATE_ABOVE >= 60  # a 60-replica set still gets one lane per pod
    _, meta = timeline_figure([many_pods(plot().AGGREGATE_ABOVE + above)])
    assert meta["Comment"].startswith(f"views=web={view} ")


def test_many_sets_are_drawn_as_one_aggregated_view() -> None:
    sets = plot().SET_PANELS + 1
    events = [e for i in range(sets) for e in bring_up([f"s{i}-0", f"s{i}-1"])]
    doc = result(events, ended=20, summary={f"s{i}": {"completed": True, "maxUnavailableObserved": 0}
                                            for i in range(sets)})
    doc["final"]["statefulSets"] = [{"name": f"s{i}", "status": {"updateRevision": NEW}} for i in range(sets)]
    fig, meta = timeline_figure([doc])
    assert meta["Comment"].startswith(f"views={sets} sets=aggregated ")
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert titles[0].startswith(f"{sets} sets, {2 * sets} pods: {sets}/{sets} completed")


def test_steps_starting_together_share_one_summed_up_label() -> None:
    doc = rolling_update()
    doc["events"] += [ev(10, "Step", index=i, action="patch") for i in range(2, 200)]
    fig, _ = timeline_figure([doc])
    labels = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text") and "patch" in str(a.get_text()))]
    assert labels == ["#1\u2013#199: 199 x patch"]
