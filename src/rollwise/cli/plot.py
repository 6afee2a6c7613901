"""Timeline plots of result documents (``--plot OUT.png``): one panel per run, one lane per pod ordinal.

The only input is the result document of spec/simulate.md: pod states are rebuilt from its event stream, the
"new" revision is the set's final ``status.updateRevision``. Drawing uses matplotlib's object API with the Agg
canvas (no pyplot, no global state).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure, SubFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import blended_transform_factory

from rollwise.api.identity import parent_and_ordinal

__all__ = [
    "AGGREGATE_ABOVE", "FAILING", "MISSING", "PENDING", "READY", "RUNNING", "STATES", "TERMINATING", "Interval",
    "QuorumMarks", "plot_timelines", "pod_intervals", "quorum_marks", "state_counts", "unavailable_counts",
]

MISSING, PENDING, RUNNING, READY, FAILING, TERMINATING = (
    "missing", "pending", "running", "ready", "failing", "terminating")
STATES = (READY, RUNNING, PENDING, FAILING, TERMINATING, MISSING)  # also the stacking order of the aggregated view
AGGREGATE_ABOVE = 60  # more ordinals than this: counts per state instead of one lane per pod

# Waiting reasons that mean "this container is not going to start by itself" (kubelet's error reasons); benign ones
# (ContainerCreating, PodInitializing) mean pending.
_FAILING_REASONS = frozenset({"ImagePullBackOff", "ErrImagePull", "CrashLoopBackOff", "CreateContainerConfigError",
                              "CreateContainerError", "InvalidImageName", "RunContainerError", "ErrImageNeverPull"})


class Interval(NamedTuple):
    """One ordinal in one state over ``[start, end)``; a NamedTuple so test tables can compare plain tuples."""

    start: float
    end: float
    state: str
    is_new: bool


Lanes = dict[int, list[Interval]]


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumMarks:
    """What a quorum model reported for one set: outages, leader tenures and every leader change."""

    lost: tuple[tuple[float, float], ...] = ()
    leaders: tuple[tuple[float, float, str], ...] = ()  # (start, end, pod)
    changes: tuple[tuple[float, str | None], ...] = ()  # (t, new leader or None)


@dataclass(slots=True)
class _Life:
    """One pod object from PodCreated to PodGone, with the flags its state is derived from."""

    set_name: str
    ordinal: int
    is_new: bool
    since: float
    state: str = PENDING
    running: bool = False
    ready: bool = False
    failing: bool = False
    terminating: bool = False

    def derived(self) -> str:
        if self.terminating:  # deletion requested: whatever the container does, the pod is on its way out
            return TERMINATING
        if self.failing:
            return FAILING
        if self.ready:
            return READY
        return RUNNING if self.running else PENDING


# -- the pure part: states from events ---------------------------------------------------------------------------


def _end_time(result: Mapping[str, Any]) -> float:
    events = result.get("events") or ()
    last = max((float(ev["t"]) for ev in events), default=0.0)
    return max(float(result.get("endedAt") or 0.0), last)


def _is_failing(reason: str) -> bool:
    return reason in _FAILING_REASONS or reason.endswith("BackOff") or reason.startswith("Err")


def _set_and_ordinal(ev: Mapping[str, Any]) -> tuple[str, int] | None:
    """The pod's set and ordinal: the event's ``ordinal`` when given, else the name's numeric suffix."""
    parent, ordinal = parent_and_ordinal(str(ev["pod"]))
    given = ev.get("ordinal")
    if isinstance(given, int) and given >= 0:
        suffix = f"-{given}"
        return (ev["pod"][: -len(suffix)] if ev["pod"].endswith(suffix) else parent or ev["pod"]), given
    return (parent, ordinal) if ordinal >= 0 else None


def _update_revisions(result: Mapping[str, Any]) -> dict[str, str]:
    """Per set: the final updateRevision, or (no ``final``) the revision of the last pod created."""
    out: dict[str, str] = {}
    for ev in result.get("events") or ():
        if ev.get("type") == "PodCreated" and ev.get("pod") and ev.get("revision"):
            found = _set_and_ordinal(ev)
            if found is not None:
                out[found[0]] = ev["revision"]
    for sts in (result.get("final") or {}).get("statefulSets") or ():
        rev = (sts.get("status") or {}).get("updateRevision")
        if rev:
            out[sts["name"]] = rev
    return out


def _push(lane: list[Interval], item: Interval) -> None:
    """Append, dropping empty intervals and merging with an equal neighbour (several events at one instant)."""
    if item.end <= item.start:
        return
    if lane and lane[-1].end == item.start and lane[-1][2:] == item[2:]:
        lane[-1] = lane[-1]._replace(end=item.end)
    else:
        lane.append(item)


def _apply(life: _Life, ev: Mapping[str, Any]) -> None:
    kind = ev["type"]
    if kind == "PodRunning":
        life.running, life.failing = True, False
    elif kind == "PodReady":
        life.ready, life.failing = True, False
    elif kind == "PodNotReady":
        life.ready = False
    elif kind == "PodFailed":
        life.ready, life.failing = False, True
    elif kind == "PodDeleteRequested":
        life.terminating = True
    elif kind == "ContainerWaiting":
        life.failing = _is_failing(str(ev.get("reason") or ""))


def pod_intervals(result: Mapping[str, Any]) -> dict[str, Lanes]:
    """Per set, per ordinal: contiguous ``Interval``s of pod state rebuilt from the event stream.

    An ordinal is "in range" from its first PodCreated, and the gaps between its pods are ``missing``. Whether an
    ordinal whose last pod is gone stays in range (missing until the end) is ``_stays_in_range``'s guess. The
    document does not carry ``spec.replicas`` over time, so ordinals not yet created during the initial bring-up
    are not counted as missing.
    """
    end = _end_time(result)
    update = _update_revisions(result)
    out: dict[str, Lanes] = {sts["name"]: {} for sts in (result.get("final") or {}).get("statefulSets") or ()}
    lives: dict[str, _Life] = {}
    gone_at: dict[tuple[str, int], float] = {}
    for ev in result.get("events") or ():
        pod, t = ev.get("pod"), float(ev["t"])
        if not pod:
            continue
        if ev["type"] == "PodCreated":
            found = _set_and_ordinal(ev)
            if found is None:
                continue
            lane = out.setdefault(found[0], {}).setdefault(found[1], [])
            if found in gone_at:
                _push(lane, Interval(gone_at.pop(found), t, MISSING, False))
            lives[pod] = _Life(set_name=found[0], ordinal=found[1], since=t,
                               is_new=ev.get("revision") == update.get(found[0]))
            continue
        life = lives.get(pod)
        if life is None:
            continue
        if ev["type"] == "PodGone":
            _push(out[life.set_name][life.ordinal], Interval(life.since, t, life.state, life.is_new))
            gone_at[(life.set_name, life.ordinal)] = t
            del lives[pod]
            continue
        _apply(life, ev)
        state = life.derived()
        if state != life.state:
            _push(out[life.set_name][life.ordinal], Interval(life.since, t, life.state, life.is_new))
            life.since, life.state = t, state
    for life in lives.values():
        _push(out[life.set_name][life.ordinal], Interval(life.since, end, life.state, life.is_new))
    stays = _stays_in_range(result, {(life.set_name, life.ordinal) for life in lives.values()})
    for key, t in gone_at.items():
        if stays(key, t):
            _push(out[key[0]][key[1]], Interval(t, end, MISSING, False))
    return {name: dict(sorted(lanes.items())) for name, lanes in out.items()}


def _stays_in_range(result: Mapping[str, Any], alive: set[tuple[str, int]]) -> Callable[[tuple[str, int], float], bool]:
    """Did an ordinal whose last pod went away at ``t`` stay wanted (missing), or was it scaled away?

    Exact when ``final.statefulSets[].spec.replicas`` is there. Otherwise: a hole below an ordinal alive at the end
    is missing; above, only a ``scale`` or ``apply`` step can have shrunk the range, so the ordinal left it only
    when such a step started before it went (template patches delete pods that a stuck rollout never recreates).
    """
    wanted: dict[str, range] = {}
    for sts in (result.get("final") or {}).get("statefulSets") or ():
        spec = sts.get("spec") or {}
        if isinstance(spec.get("replicas"), int):
            start = int((spec.get("ordinals") or {}).get("start") or 0)
            wanted[sts["name"]] = range(start, start + spec["replicas"])
    top: dict[str, int] = {}
    for name, ordinal in alive:
        top[name] = max(top.get(name, -1), ordinal)
    resized = [float(ev["t"]) for ev in result.get("events") or ()
               if ev["type"] == "Step" and ev.get("action") in ("scale", "apply")]

    def stays(key: tuple[str, int], t: float) -> bool:
        name, ordinal = key
        if name in wanted:
            return ordinal in wanted[name]
        return ordinal < top.get(name, -1) or not any(r <= t for r in resized)

    return stays


def _sweep(lanes: Lanes, key: Callable[[Interval], Any], end: float) -> tuple[list[float], dict[Any, list[int]]]:
    """Step functions (value from each time until the next) of how many ordinals have each ``key``."""
    deltas: dict[float, dict[Any, int]] = {0.0: {}, end: {}}
    keys: list[Any] = []
    for lane in lanes.values():
        for iv in lane:
            k = key(iv)
            if k is None:
                continue
            if k not in keys:
                keys.append(k)
            deltas.setdefault(iv.start, {})[k] = deltas.get(iv.start, {}).get(k, 0) + 1
            deltas.setdefault(iv.end, {})[k] = deltas.get(iv.end, {}).get(k, 0) - 1
    times: list[float] = []
    counts: dict[Any, list[int]] = {k: [] for k in keys}
    running = dict.fromkeys(keys, 0)
    for t in sorted(deltas):
        if t == end:  # intervals are cut at the end, not over: the last value holds, and closes the step line
            times.append(t)
            for k in keys:
                counts[k].append(counts[k][-1] if counts[k] else 0)
            break
        for k, d in deltas[t].items():
            running[k] += d
        if times and all(counts[k][-1] == running[k] for k in keys):
            continue  # nothing changed at this instant (a pod left one state for another)
        times.append(t)
        for k in keys:
            counts[k].append(running[k])
    return times, counts


def state_counts(lanes: Lanes, end: float) -> tuple[list[float], dict[tuple[str, bool], list[int]]]:
    """How many ordinals are in each (state, is_new) from each change time on (the aggregated view's data)."""
    return _sweep(lanes, lambda iv: (iv.state, iv.is_new), end)


def unavailable_counts(lanes: Lanes, end: float) -> tuple[list[float], list[int]]:
    """Ordinals in range that are missing or not Ready, from each change time on.

    spec/simulate.md counts "not available" (Ready for minReadySeconds); the document has no minReadySeconds, so
    this ignores it and may read lower than the summary's ``maxUnavailableObserved`` for sets that use it.
    """
    times, counts = _sweep(lanes, lambda iv: True if iv.state != READY else None, end)
    return times, counts.get(True, [0] * len(times))


def _quorum_set(ev: Mapping[str, Any], last: str | None, result: Mapping[str, Any]) -> str | None:
    named = ev.get("statefulSet") or ev.get("set")
    if named:
        return str(named)
    if ev.get("pod"):
        return parent_and_ordinal(str(ev["pod"]))[0] or None
    if last is not None:  # QuorumLost/Restored carry no pod: the set whose leader we saw last
        return last
    sets = [name for name, fig in (result.get("summary") or {}).items() if fig.get("quorumLossSeconds") is not None]
    return sets[0] if len(sets) == 1 else None


def quorum_marks(result: Mapping[str, Any]) -> dict[str, QuorumMarks]:
    """Per set with quorum events: the intervals quorum was lost, leader tenures and leader changes."""
    end = _end_time(result)
    lost: dict[str, list[tuple[float, float]]] = {}
    leaders: dict[str, list[tuple[float, float, str]]] = {}
    changes: dict[str, list[tuple[float, str | None]]] = {}
    lost_since: dict[str, float] = {}
    leader: dict[str, tuple[float, str]] = {}
    last: str | None = None
    for ev in result.get("events") or ():
        if ev["type"] not in ("QuorumLost", "QuorumRestored", "LeaderChanged"):
            continue
        t, name = float(ev["t"]), _quorum_set(ev, last, result)
        if name is None:
            continue
        last = name
        changes.setdefault(name, [])
        if ev["type"] == "QuorumLost":
            lost_since.setdefault(name, t)
        elif ev["type"] == "QuorumRestored" and name in lost_since:
            lost.setdefault(name, []).append((lost_since.pop(name), t))
        elif ev["type"] == "LeaderChanged":
            if name in leader:
                since, pod = leader.pop(name)
                leaders.setdefault(name, []).append((since, t, pod))
            if ev.get("pod"):
                leader[name] = (t, ev["pod"])
            changes[name].append((t, ev.get("pod")))
    for name, since in lost_since.items():
        lost.setdefault(name, []).append((since, end))
    for name, (since, pod) in leader.items():
        leaders.setdefault(name, []).append((since, end, pod))
    return {name: QuorumMarks(lost=tuple(lost.get(name, ())), leaders=tuple(leaders.get(name, ())),
                              changes=tuple(ch)) for name, ch in changes.items()}


# -- drawing -------------------------------------------------------------------------------------------------------

_COLOURS = {READY: "#3a9a3f", RUNNING: "#f0b429", PENDING: "#7fb3e0", FAILING: "#d7301f",
            TERMINATING: "#8e6bbf", MISSING: "#e4e4e4"}
_LABELS = {READY: "Ready", RUNNING: "running, not Ready", PENDING: "pending (created, not running)",
           FAILING: "failing (ImagePullBackOff, CrashLoopBackOff, Failed...)", TERMINATING: "terminating",
           MISSING: "missing (no pod)"}
_OLD_HATCH = "////"
_LANE_LIMIT_IN = 5.5  # keep a lanes view this tall at most, whatever the ordinal count
_WIDTH_IN = 13.0
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
    figures: Mapping[str, Any] = field(default_factory=dict)

    def lanes_height(self) -> float:
        if self.aggregated:
            return 2.2
        return max(0.7, min(_LANE_LIMIT_IN, 0.26 * len(self.lanes)))


def _summary_line(plan: _SetPlan) -> str:
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


def _step_labels(result: Mapping[str, Any]) -> list[tuple[float, str]]:
    """Step events grouped by instant: several steps that start together share one line and one label."""
    grouped: dict[float, list[str]] = {}
    for ev in result.get("events") or ():
        if ev["type"] == "Step":
            grouped.setdefault(float(ev["t"]), []).append(f"#{ev.get('index')} {ev.get('action')}")
    return [(t, ", ".join(names)) for t, names in sorted(grouped.items())]


def _stagger(labels: Sequence[tuple[float, str]], xmax: float, width_pt: float, size: float) -> list[int]:
    """A row per label so that labels close in time do not overlap: the lowest row whose last label has ended."""
    ends: list[float] = []  # per row, where its last label ends (fraction of the axis width)
    rows = []
    for t, text in labels:
        row = next((i for i, e in enumerate(ends) if e <= t / xmax), len(ends))
        ends[row:row + 1] = [t / xmax + (len(text) + 1) * size * 0.55 / width_pt]
        rows.append(row)
    return rows


def _draw_lanes(ax: Axes, plan: _SetPlan) -> None:
    ordinals = list(plan.lanes)
    if not ordinals:
        ax.text(0.5, 0.5, "no pods", transform=ax.transAxes, ha="center", va="center", fontsize=9, color="#777777")
        ax.set_yticks([])
        return
    for y, ordinal in enumerate(ordinals):
        runs: dict[tuple[str, bool], list[tuple[float, float]]] = {}
        for iv in plan.lanes[ordinal]:
            runs.setdefault((iv.state, iv.is_new), []).append((iv.start, iv.end - iv.start))
        for (state, is_new), xr in runs.items():
            ax.broken_barh(xr, (y - 0.38, 0.76), **_style(state, is_new))
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
    ax.set_ylabel(f"{len(plan.lanes)} pods", fontsize=8)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=5))


def _draw_counts(ax: Axes, plan: _SetPlan, end: float) -> None:
    times, unavailable = unavailable_counts(plan.lanes, end)
    ax.fill_between(times, unavailable, step="post", color="#d7301f", alpha=0.18, linewidth=0)
    ax.step(times, unavailable, where="post", color="#a51d12", linewidth=1.3)
    top = max(unavailable, default=0)
    if plan.marks is not None:
        ptimes, ready = _sweep(plan.lanes, lambda iv: True if iv.state == READY else None, end)
        participating = ready.get(True, [0] * len(ptimes))
        ax.step(ptimes, participating, where="post", color="#1f6f2a", linewidth=1.2, linestyle="--")
        top = max(top, *participating)
        for t, pod in plan.marks.changes:
            ax.plot([t], [top + 0.6], marker="D" if pod else "x", markersize=4, color="black", clip_on=False)
    ax.set_ylim(0, top + 1)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
    ax.set_ylabel("pods" if plan.marks is not None else "unavailable", fontsize=8)
    ax.tick_params(labelsize=8)


def _past(t: float, end: float, tail: float) -> float:
    return t + tail if t >= end - tail else t


def _draw_panel(sf: SubFigure, result: Mapping[str, Any], title: str, plans: list[_SetPlan], xmax: float,
                share: Axes | None) -> Axes:
    tail = xmax * _TAIL
    end = _end_time(result) + tail
    xmax += tail
    for plan in plans:  # what is still open at the run's end is drawn a little past it, so it stays visible
        plan.lanes = {o: [iv._replace(end=_past(iv.end, end, tail)) for iv in lane] for o, lane in plan.lanes.items()}
        if plan.marks is not None:
            plan.marks = QuorumMarks(lost=tuple((a, _past(b, end, tail)) for a, b in plan.marks.lost),
                                     leaders=tuple((a, _past(b, end, tail), p) for a, b, p in plan.marks.leaders),
                                     changes=plan.marks.changes)
    ratios = [h for plan in plans for h in (plan.lanes_height(), 0.8)]
    gs = sf.add_gridspec(len(ratios), 1, height_ratios=ratios)
    axes = [sf.add_subplot(gs[i], sharex=share or None) for i in range(len(ratios))]
    share = share or axes[0]
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
        pad = 4 + 9 * (max(rows) + 1) if k == 0 and steps else 4
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
        axes[0].annotate(text, xy=(t, 1.0), xycoords=trans, xytext=(2, 2 + 9 * row), textcoords="offset points",
                         fontsize=7, color="#333333", annotation_clip=False)
    if end - tail > xmax:  # the axis stops after the last change (_horizon): say that the run went on
        axes[1].text(0.995, 0.93, f"unchanged until the run ends at {round(end - tail, 1):g} s \u2192",
                     transform=axes[1].transAxes, ha="right", va="top", fontsize=8, color="#444444",
                     bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "alpha": 0.9, "boxstyle": "round"})
    axes[-1].set_xlabel("virtual seconds", fontsize=9)
    sf.suptitle(title, x=0.01, ha="left", fontsize=11, fontweight="bold")
    return share


def _legend_handles(any_quorum: bool) -> list[Any]:
    handles: list[Any] = [Patch(label=_LABELS[s], **_style(s, True)) for s in STATES]
    handles += [Patch(facecolor=_old_tint("#777777"), hatch=_OLD_HATCH, edgecolor="#777777", linewidth=0,
                      label="hatched, washed out: an older revision"),
                Patch(facecolor="#777777", linewidth=0, label="solid: new revision (final updateRevision)"),
                Line2D([], [], color="#333333", linewidth=0.7, linestyle=(0, (3, 2)), label="step (index action)"),
                Line2D([], [], color="#a51d12", linewidth=1.3, label="unavailable ordinals (minReadySeconds ignored)")]
    if any_quorum:
        handles += [Patch(facecolor="#f7dcd9", edgecolor="#d7301f", linewidth=1.6, label="quorum lost"),
                    Line2D([], [], color="#1f6f2a", linestyle="--", label="participating members (Ready)"),
                    Line2D([], [], color="black", linewidth=2.5, marker="D", markersize=4,
                           label="leader (diamond: change, x: no leader)")]
    return handles


def _horizon(results: Sequence[Mapping[str, Any]], plans: Sequence[Sequence[_SetPlan]]) -> float:
    """Where the shared time axis ends: the longest run, or shortly after the last change when every run then idles
    for a long time (a stuck rollout waiting for its timeout would squeeze the interesting part into a sliver)."""
    full = max(_end_time(r) for r in results) or 1.0
    changes: list[float] = [0.0]
    for result, ps in zip(results, plans, strict=True):
        end = _end_time(result)
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
    return [_SetPlan(name=name, lanes=lanes, aggregated=len(lanes) > AGGREGATE_ABOVE, marks=marks.get(name),
                     figures=summary.get(name) or {})
            for name, lanes in pod_intervals(result).items()] or [_SetPlan(name="(no pods)", lanes={},
                                                                            aggregated=False, marks=None)]


def plot_timelines(results: Sequence[Mapping[str, Any]], out: str | Path, *,
                   titles: Sequence[str] | None = None) -> Path:
    """Write a PNG with one panel per result on a shared time axis; its Description says ``panels=N``."""
    if not results:
        raise ValueError("plot_timelines: no results to plot (expected at least one result document)")
    if titles is not None and len(titles) != len(results):
        raise ValueError(f"plot_timelines: {len(titles)} titles for {len(results)} results")
    names = [str(titles[i]) if titles is not None else str(r.get("strategy") or r.get("scenario") or f"run {i}")
             for i, r in enumerate(results)]
    plans = [_plans(r) for r in results]
    xmax = _horizon(results, plans)
    heights = [0.75 + sum(p.lanes_height() + 1.0 for p in ps) + 0.45 for ps in plans]
    fig = Figure(figsize=(_WIDTH_IN, sum(heights) + 1.1), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    subfigs = fig.subfigures(len(results), 1, height_ratios=heights, squeeze=False)[:, 0]
    share: Axes | None = None
    for sf, result, title, ps in zip(subfigs, results, names, plans, strict=True):
        share = _draw_panel(sf, result, title, ps, xmax, share)
    scenarios = {str(r.get("scenario")) for r in results}
    heading = scenarios.pop() if len(scenarios) == 1 else " vs ".join(names)
    if len(results) > 1 and heading not in names:
        fig.suptitle(heading, fontsize=12)
    handles = _legend_handles(any(p.marks for ps in plans for p in ps))
    if any(_end_time(r) < xmax for r in results):
        handles.append(Patch(facecolor="#f3f3f3", edgecolor="#cccccc", label="after this run ended"))
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=8, frameon=False)
    views = ";".join(",".join(f"{p.name}={'aggregated' if p.aggregated else 'lanes'}" for p in ps) for ps in plans)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Title": heading, "Description": f"panels={len(results)}",
                                              "Comment": f"views={views} axisEnd={xmax:g}"})
    return path
