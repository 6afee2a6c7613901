"""Timeline plots of result documents (``--plot OUT.png``): one panel per run, one lane per pod ordinal.

The pod states come from ``rollwise.cli.timeline`` (rebuilt from the result document of spec/simulate.md); this
module only draws them. Drawing uses matplotlib's object API with the Agg canvas (no pyplot, no global state).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure, SubFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import blended_transform_factory

from rollwise.api.errors import FieldError, InvalidObject
from rollwise.cli.quorum_marks import QuorumMarks, quorum_marks
from rollwise.cli.timeline import (
    FAILING,
    MISSING,
    PENDING,
    READY,
    RUNNING,
    STATES,
    TERMINATING,
    Lanes,
    Series,
    end_time,
    pod_intervals,
    ready_counts,
    rollout_peak,
    state_counts,
    sum_series,
    unavailable_series,
)

__all__ = ["AGGREGATE_ABOVE", "SET_PANELS", "plot_timelines", "timeline_figure"]

_COLOURS = {READY: "#3a9a3f", RUNNING: "#f0b429", PENDING: "#7fb3e0", FAILING: "#d7301f",
            TERMINATING: "#8e6bbf", MISSING: "#e4e4e4"}
_LABELS = {READY: "Ready", RUNNING: "running, not Ready", PENDING: "pending (created, not running)",
           FAILING: "failing (ImagePullBackOff, CrashLoopBackOff, Failed...)", TERMINATING: "terminating",
           MISSING: "missing (no pod)"}
_OLD_HATCH = "////"
_LANE_LIMIT_IN = 5.5  # keep a lanes view this tall at most, whatever the ordinal count
_WIDTH_IN = 13.0
_DPI = 100
_MIN_LANE_PX = 6  # a lane thinner than this stops reading as a line of its own
AGGREGATE_ABOVE = int(_LANE_LIMIT_IN * _DPI / _MIN_LANE_PX)  # more ordinals: counts per revision and state
_CLIP_RATIO = 4  # a bring-up this many times the rollout's scale is clipped rather than squeezing the rollout
SET_PANELS = 6  # a run with more sets than this draws them as one aggregated view (200 sets x 5 replicas)
_STEP_ROWS = 3  # step labels stagger over this many rows at most; the others keep their line, without a label
_TAIL = 0.015  # of the time axis: how far the end state is drawn past the run's end


def _old_tint(colour: str) -> tuple[float, float, float]:
    """Old revision: the state's colour washed out, with the full colour as hatching on top."""
    r, g, b = to_rgb(colour)
    return (r + (1 - r) * 0.55, g + (1 - g) * 0.55, b + (1 - b) * 0.55)


def _style(state: str, is_new: bool) -> dict[str, Any]:
    if is_new or state == MISSING:
        return {"facecolor": _COLOURS[state], "linewidth": 0}
    return {"facecolor": _old_tint(_COLOURS[state]), "hatch": _OLD_HATCH, "edgecolor": _COLOURS[state],
            "linewidth": 0}


@dataclass(slots=True)
class _SetPlan:
    name: str
    lanes: Lanes
    aggregated: bool
    marks: QuorumMarks | None
    unavailable: Series
    figures: Mapping[str, Any] = field(default_factory=dict)
    headline: str | None = None  # instead of the summary line (several sets drawn as one)

    def lanes_height(self) -> float:
        if self.aggregated:
            return 3.0
        return max(0.7, min(_LANE_LIMIT_IN, 0.26 * len(self.lanes)))


def _summary_line(plan: _SetPlan) -> str:
    if plan.headline is not None:
        return plan.headline
    fig = plan.figures
    if not fig:
        return plan.name
    parts = [f"{plan.name}:", "completed" if fig.get("completed") else "NOT completed"]
    if fig.get("rolloutSeconds") is not None:
        parts.append(f"· rollout {fig['rolloutSeconds']:g} s")
    parts.append(f"· max unavailable {fig.get('maxUnavailableObserved', '?')}")
    if fig.get("quorumLossSeconds") is not None:
        parts.append(f"· quorum lost {fig['quorumLossSeconds']:g} s")
    return " ".join(parts)


def _step_label(steps: Sequence[tuple[Any, Any]]) -> str:
    """Steps that start together share one label; many of them are summed up (200 patches, one per set)."""
    if len(steps) <= 3:
        return ", ".join(f"#{index} {action}" for index, action in steps)
    counts: dict[str, int] = {}
    for _, action in steps:
        counts[str(action)] = counts.get(str(action), 0) + 1
    return f"#{steps[0][0]}\u2013#{steps[-1][0]}: " + ", ".join(f"{n} x {action}" for action, n in counts.items())


def _step_labels(result: Mapping[str, Any]) -> list[tuple[float, str]]:
    """Step events grouped by instant: several steps that start together share one line and one label."""
    grouped: dict[float, list[tuple[Any, Any]]] = {}
    for ev in result.get("events") or ():
        if ev["type"] == "Step":
            grouped.setdefault(float(ev["t"]), []).append((ev.get("index"), ev.get("action")))
    return [(t, _step_label(steps)) for t, steps in sorted(grouped.items())]


def _stagger(labels: Sequence[tuple[float, str]], xmax: float, width_pt: float, size: float) -> list[int | None]:
    """A row per label so that labels close in time do not overlap: the lowest row whose last label has ended;
    None (no label, the line stays) when every one of the ``_STEP_ROWS`` rows is still taken."""
    ends: list[float] = []  # per row, where its last label ends (fraction of the axis width)
    rows: list[int | None] = []
    for t, text in labels:
        row = next((i for i, e in enumerate(ends) if e <= t / xmax), len(ends))
        if row >= _STEP_ROWS:
            rows.append(None)
            continue
        ends[row:row + 1] = [t / xmax + (len(text) + 1) * size * 0.55 / width_pt]
        rows.append(row)
    return rows


def _draw_lanes(ax: Axes, plan: _SetPlan) -> None:
    ordinals = list(plan.lanes)
    if not ordinals:
        ax.text(0.5, 0.5, "no pods", transform=ax.transAxes, ha="center", va="center", fontsize=9, color="#777777")
        ax.set_yticks([])
        return
    # one collection per style for all the lanes: an artist per lane and state costs more to draw than the bars
    boxes: dict[tuple[str, bool], list[list[tuple[float, float]]]] = {}
    for y, ordinal in enumerate(ordinals):
        for iv in plan.lanes[ordinal]:
            boxes.setdefault((iv.state, iv.is_new), []).append(
                [(iv.start, y - 0.38), (iv.start, y + 0.38), (iv.end, y + 0.38), (iv.end, y - 0.38)])
    for (state, is_new), verts in boxes.items():
        ax.add_collection(PolyCollection(verts, **_style(state, is_new)), autolim=False)
    if plan.marks is not None:
        row = {f"{plan.name}-{o}": y for y, o in enumerate(ordinals)}
        for start, end, pod in plan.marks.leaders:
            if pod in row:
                ax.broken_barh([(start, end - start)], (row[pod] - 0.07, 0.14), facecolor="black", zorder=4)
                ax.plot([start], [row[pod]], marker="D", markersize=4, color="black", zorder=5)
    step = max(1, round(len(ordinals) / (_LANE_LIMIT_IN / 0.14)))  # about one label per 0.14 inch
    ax.set_yticks(range(0, len(ordinals), step), [f"{plan.name}-{o}" for o in ordinals[::step]],
                  fontsize=8 if len(ordinals) <= 20 else 6)
    ax.set_ylim(len(ordinals) - 0.5, -0.5)  # ordinal 0 on top, as kubectl lists them


def _draw_aggregated(ax: Axes, plan: _SetPlan, end: float) -> None:
    times, counts = state_counts(plan.lanes, end)
    keys = [(s, new) for s in STATES for new in (True, False) if (s, new) in counts]
    polys = ax.stackplot(times, *[counts[k] for k in keys], step="post", linewidth=0)
    for poly, (state, is_new) in zip(polys, keys, strict=True):
        style = _style(state, is_new)
        poly.set_facecolor(style["facecolor"])
        if "hatch" in style:
            poly.set_hatch(style["hatch"])
            poly.set_edgecolor(style["edgecolor"])
    ax.set_ylim(0, max(len(plan.lanes), 1))
    ax.set_ylabel(f"{len(plan.lanes):,} pods", fontsize=8)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))


def _rollout_peak(plan: _SetPlan) -> int:
    """The header's max unavailable: the summary's own figure, or (a document without one) the series' peak."""
    given = plan.figures.get("maxUnavailableObserved")
    return given if isinstance(given, int) else rollout_peak(plan.unavailable)


def _headroom(top: int) -> int:
    return top + max(1, -(-top * 15 // 100))


def _draw_counts(ax: Axes, plan: _SetPlan, end: float) -> None:
    """The unavailable ordinals, scaled to the rollout: the bring-up of a big set (every ordinal missing at first)
    would flatten a rollout that keeps a handful down, so when it does not fit it is clipped and said so."""
    series = plan.unavailable
    ax.fill_between(series.times, series.counts, step="post", color="#d7301f", alpha=0.18, linewidth=0)
    ax.step(series.times, series.counts, where="post", color="#a51d12", linewidth=1.3, gid=f"unavailable:{plan.name}")
    peak = _rollout_peak(plan)
    top = peak
    if plan.marks is not None:
        ptimes, participating = ready_counts(plan.lanes, end)
        ax.step(ptimes, participating, where="post", color="#1f6f2a", linewidth=1.2, linestyle="--")
        top = max(top, *participating)
    limit = _headroom(top)
    before = max(series.counts[:series.measured_index], default=0)  # the bring-up, before measuring starts
    clipped = before > _CLIP_RATIO * limit
    if not clipped:  # a small set: its bring-up fits on the rollout's scale
        limit = _headroom(max(top, before))
    else:
        ax.axvspan(0, series.measured_from, color="#e9e9e9", linewidth=0, zorder=0.3)
        ax.text(0.004, 0.06, f"before the rollout: up to {before:,} unavailable (clipped; the scale is the "
                f"rollout's)", transform=ax.transAxes, ha="left", va="bottom", fontsize=7, color="#444444",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1.5}, zorder=7)
    if peak > 0:
        ax.axhline(peak, color="#a51d12", linewidth=0.7, linestyle=":", zorder=2)
        ax.annotate(f"max {peak:,}", xy=(series.measured_from, peak), xytext=(3, 1.5), textcoords="offset points",
                    ha="left", va="bottom", fontsize=7, color="#a51d12", zorder=7)
    if plan.marks is not None:
        marks = blended_transform_factory(ax.transData, ax.transAxes)
        for t, pod in plan.marks.changes:
            ax.plot([t], [0.93], marker="D" if pod else "x", markersize=4, color="black", clip_on=False,
                    transform=marks)
    ax.set_ylim(0, limit)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
    ax.set_ylabel("pods" if plan.marks is not None else "unavailable", fontsize=8)
    ax.tick_params(labelsize=8)


def _past(t: float, end: float, tail: float) -> float:
    return t + tail if t >= end - tail else t


def _draw_panel(sf: SubFigure, result: Mapping[str, Any], title: str, plans: list[_SetPlan], xmax: float) -> None:
    tail = xmax * _TAIL
    end = end_time(result) + tail
    xmax += tail
    for plan in plans:  # what is still open at the run's end is drawn a little past it, so it stays visible
        times, counts = plan.unavailable.times, plan.unavailable.counts
        if times and times[-1] < end:
            plan.unavailable = plan.unavailable._replace(times=[*times, end], counts=[*counts, counts[-1]])
        plan.lanes = {o: [*lane[:-1], lane[-1]._replace(end=_past(lane[-1].end, end, tail))] if lane else lane
                      for o, lane in plan.lanes.items()}
        if plan.marks is not None:
            plan.marks = QuorumMarks(lost=tuple((a, _past(b, end, tail)) for a, b in plan.marks.lost),
                                     leaders=tuple((a, _past(b, end, tail), p) for a, b, p in plan.marks.leaders),
                                     changes=plan.marks.changes)
    ratios = [h for plan in plans for h in (plan.lanes_height(), 0.8)]
    gs = sf.add_gridspec(len(ratios), 1, height_ratios=ratios)
    # x shared within the panel only: a limit shared across subfigures redraws the whole figure on every change
    first = sf.add_subplot(gs[0])
    axes = [first, *(sf.add_subplot(gs[i], sharex=first) for i in range(1, len(ratios)))]
    steps = _step_labels(result)
    rows = _stagger(steps, xmax, (_WIDTH_IN - 2.0) * 72, 7)
    for k, plan in enumerate(plans):
        lane_ax, count_ax = axes[2 * k], axes[2 * k + 1]
        if plan.aggregated:
            _draw_aggregated(lane_ax, plan, end)
        else:
            _draw_lanes(lane_ax, plan)
        _draw_counts(count_ax, plan, end)
        for start, stop in plan.marks.lost if plan.marks else ():
            # filled where it hides nothing, outlined over the lanes so the pod colours stay true
            count_ax.axvspan(start, stop, color="#d7301f", alpha=0.13, linewidth=0, zorder=0.5)
            lane_ax.axvspan(start, stop, fill=False, edgecolor="#d7301f", linewidth=1.6, zorder=5)
        pad = 4 + 9 * (max((r for r in rows if r is not None), default=-1) + 1) if k == 0 else 4
        lane_ax.set_title(_summary_line(plan), loc="left", fontsize=9, pad=pad)
    for ax in axes:
        for t, _ in steps:
            ax.axvline(t, color="#333333", linewidth=0.7, linestyle=(0, (3, 2)), alpha=0.8, zorder=6)
        if end < xmax:  # a shorter run in a comparison: grey out the time after it ended
            ax.axvspan(end, xmax, color="#f3f3f3", linewidth=0, zorder=0.4)
        ax.tick_params(axis="x", labelbottom=ax is axes[-1], labelsize=8)
        ax.set_xlim(0, xmax)
    trans = blended_transform_factory(axes[0].transData, axes[0].transAxes)
    for (t, text), row in zip(steps, rows, strict=True):
        if row is None:
            continue
        axes[0].annotate(text, xy=(t, 1.0), xycoords=trans, xytext=(2, 2 + 9 * row), textcoords="offset points",
                         fontsize=7, color="#333333", annotation_clip=False)
    if end - tail > xmax:  # the axis stops after the last change (_horizon): say that the run went on
        axes[1].text(0.995, 0.93, f"unchanged until the run ends at {round(end - tail, 1):g} s \u2192",
                     transform=axes[1].transAxes, ha="right", va="top", fontsize=8, color="#444444",
                     bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "alpha": 0.9, "boxstyle": "round"})
    axes[-1].set_xlabel("virtual seconds", fontsize=9)
    sf.suptitle(title, x=0.01, ha="left", fontsize=11, fontweight="bold")


def _legend_handles(any_quorum: bool) -> list[Any]:
    handles: list[Any] = [Patch(label=_LABELS[s], **_style(s, True)) for s in STATES]
    handles += [Patch(facecolor=_old_tint("#777777"), hatch=_OLD_HATCH, edgecolor="#777777", linewidth=0,
                      label="hatched, washed out: an older revision"),
                Patch(facecolor="#777777", linewidth=0, label="solid: new revision (final updateRevision)"),
                Line2D([], [], color="#333333", linewidth=0.7, linestyle=(0, (3, 2)), label="step (index action)"),
                Line2D([], [], color="#a51d12", linewidth=1.3, label="unavailable ordinals (as the summary counts)"),
                Line2D([], [], color="#a51d12", linewidth=0.7, linestyle=":", label="max unavailable in the rollout")]
    if any_quorum:
        handles += [Patch(facecolor="#f7dcd9", edgecolor="#d7301f", linewidth=1.6, label="quorum lost"),
                    Line2D([], [], color="#1f6f2a", linestyle="--", label="participating members (Ready)"),
                    Line2D([], [], color="black", linewidth=2.5, marker="D", markersize=4,
                           label="leader (diamond: change, x: no leader)")]
    return handles


def _horizon(results: Sequence[Mapping[str, Any]], plans: Sequence[Sequence[_SetPlan]]) -> float:
    """Where the shared time axis ends: the longest run, or shortly after the last change when every run then idles
    for a long time (a stuck rollout waiting for its timeout would squeeze the interesting part into a sliver)."""
    full = max(end_time(r) for r in results) or 1.0
    changes: list[float] = [0.0]
    for result, ps in zip(results, plans, strict=True):
        end = end_time(result)
        changes += [float(ev["t"]) for ev in result.get("events") or () if ev["type"] == "Step"]
        for plan in ps:
            marks = plan.marks or QuorumMarks()
            changes += [t for t, _ in marks.changes] + [t for span in marks.lost for t in span if t < end]
            changes += [t for lane in plan.lanes.values() for iv in lane for t in (iv.start, iv.end) if t < end]
    last = max(changes)
    return full if last >= 0.75 * full else min(full, max(last * 1.12, last + 5.0))


def _plans(result: Mapping[str, Any]) -> list[_SetPlan]:
    marks = quorum_marks(result)
    summary = result.get("summary") or {}
    end = end_time(result)
    plans = [_SetPlan(name=name, lanes=lanes, aggregated=len(lanes) > AGGREGATE_ABOVE, marks=marks.get(name),
                      unavailable=unavailable_series(result, name, lanes, end), figures=summary.get(name) or {})
             for name, lanes in pod_intervals(result).items()]
    if len(plans) > SET_PANELS:
        return [_merged(plans)]
    return plans or [
        _SetPlan(name="(no pods)", lanes={}, aggregated=False, marks=None, unavailable=Series([0.0, end], [0, 0]))]


def _merged(plans: list[_SetPlan]) -> _SetPlan:
    """Many sets as one view: their pods counted together by revision and state, their unavailable ordinals added
    up; the headline says how many completed and the worst set's figure."""
    lanes = dict(enumerate(lane for plan in plans for lane in plan.lanes.values()))
    unavailable = sum_series([plan.unavailable for plan in plans])
    done = sum(1 for plan in plans if plan.figures.get("completed"))
    worst = max((int(plan.figures.get("maxUnavailableObserved") or 0) for plan in plans), default=0)
    together = rollout_peak(unavailable)
    headline = (f"{len(plans)} sets, {len(lanes):,} pods: {done}/{len(plans)} completed · max unavailable "
                f"{together:,} across the sets at once, {worst:,} in one set")
    return _SetPlan(name=f"{len(plans)} sets", lanes=lanes, aggregated=True, marks=None, unavailable=unavailable,
                    figures={"maxUnavailableObserved": together}, headline=headline)


def timeline_figure(results: Sequence[Mapping[str, Any]], *,
                    titles: Sequence[str] | None = None) -> tuple[Figure, dict[str, str]]:
    """The timeline figure (one panel per result on a shared time axis) and the metadata that goes with it:
    ``Description`` says ``panels=N``, ``Comment`` each set's view and where the time axis ends."""
    if not results:
        raise ValueError("plot_timelines: no results to plot (expected at least one result document)")
    if titles is not None and len(titles) != len(results):
        raise ValueError(f"plot_timelines: {len(titles)} titles for {len(results)} results")
    names = [str(titles[i]) if titles is not None else str(r.get("strategy") or r.get("scenario") or f"run {i}")
             for i, r in enumerate(results)]
    plans = [_plans(r) for r in results]
    xmax = _horizon(results, plans)
    heights = [0.75 + sum(p.lanes_height() + 1.0 for p in ps) + 0.45 for ps in plans]
    fig = Figure(figsize=(_WIDTH_IN, sum(heights) + 1.1), dpi=_DPI, layout="constrained")
    subfigs = fig.subfigures(len(results), 1, height_ratios=heights, squeeze=False)[:, 0]
    for sf, result, title, ps in zip(subfigs, results, names, plans, strict=True):
        _draw_panel(sf, result, title, ps, xmax)
    scenarios = {str(r.get("scenario")) for r in results}
    heading = scenarios.pop() if len(scenarios) == 1 else " vs ".join(names)
    if len(results) > 1 and heading not in names:
        fig.suptitle(heading, fontsize=12)
    handles = _legend_handles(any(p.marks for ps in plans for p in ps))
    if any(end_time(r) < xmax for r in results):
        handles.append(Patch(facecolor="#f3f3f3", edgecolor="#cccccc", label="after this run ended"))
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8, frameon=False)
    views = ";".join(",".join(f"{p.name}={'aggregated' if p.aggregated else 'lanes'}" for p in ps) for ps in plans)
    return fig, {"Title": heading, "Description": f"panels={len(results)}",
                 "Comment": f"views={views} axisEnd={xmax:g}"}


def plot_timelines(results: Sequence[Mapping[str, Any]], out: str | Path, *,
                   titles: Sequence[str] | None = None) -> Path:
    """Write the timeline in the format the extension names (PNG, SVG or PDF), one panel per result on a shared
    time axis; its description says ``panels=N``. Raises InvalidObject if the file cannot be written."""
    fig, notes = timeline_figure(results, titles=titles)
    path = Path(out)
    fmt = path.suffix.lower().lstrip(".") or "png"
    about = f"{notes['Description']} {notes['Comment']}"
    # each backend takes its own metadata keys: PNG text chunks are free-form, SVG and PDF have fixed vocabularies
    metadata = {"png": notes, "svg": {"Title": notes["Title"], "Description": about},
                "pdf": {"Title": notes["Title"], "Subject": about}}.get(fmt, {})
    # The Agg canvas is attached only now: attached earlier, every set_xlim redraws the whole figure at once
    # (Agg's draw_idle draws), which made a plot quadratic in its panels.
    FigureCanvasAgg(fig)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format=fmt, metadata=metadata)
    except (OSError, ValueError) as err:
        raise InvalidObject([FieldError(path="--plot", value=str(path), rule=f"cannot write the plot: {err}")],
                            source=str(path)) from err
    return path
