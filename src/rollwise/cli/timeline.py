"""Pod states rebuilt from a result document (spec/simulate.md): the data behind ``--plot``, without drawing.

Each ordinal's lane is a run of ``Interval``s rebuilt from the event stream; the "new" revision is the set's final
``status.updateRevision``. The unavailable count is the recorder's own (``samples``), so the picture and the
summary's ``maxUnavailableObserved`` follow one rule. A quorum model's marks are ``quorum_marks.py``'s.
No matplotlib here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from rollwise.api.identity import ordinal_range, parent_and_ordinal
from rollwise.api.ordinals import OrdinalSpan

__all__ = [
    "FAILING", "MISSING", "PENDING", "READY", "RUNNING", "STATES", "TERMINATING", "Interval", "Lanes",
    "Series", "end_time", "pod_intervals", "ready_counts", "rollout_peak",
    "state_counts", "sum_series", "unavailable_counts", "unavailable_series",
]

MISSING, PENDING, RUNNING, READY, FAILING, TERMINATING = (
    "missing", "pending", "running", "ready", "failing", "terminating")
STATES = (READY, RUNNING, PENDING, FAILING, TERMINATING, MISSING)  # also the stacking order of the aggregated view

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


class Series(NamedTuple):
    """A step function (each count holds from its time until the next) and where the summary starts measuring."""

    times: list[float]
    counts: list[int]
    measured_from: float = 0.0
    measured_index: int = 0  # the count in force when measuring starts: the summary's figures count from here on
    recorded: bool = True  # the recorder's samples; False: rebuilt from the lanes (a document without samples)


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


def end_time(result: Mapping[str, Any]) -> float:
    """When the run ended: ``endedAt``, or the last event if that is later."""
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


def _push(lane: list[Interval], item: Interval, *, final: bool = False) -> None:
    """Append, dropping empty intervals and merging with an equal neighbour (several events at one instant).

    ``final``: the state a lane ends the run in is kept even when it began at the very end (a pod Ready at the
    instant the run stops), so the drawing can show it just past the end."""
    if item.end < item.start or (item.end == item.start and not final):
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

    With the recorder's ordinal range over time (``samples``), an ordinal is ``missing`` while it is in range with no
    pod. Without it (an older document), an ordinal is "in range" from its first PodCreated, the gaps between its
    pods are ``missing``, and whether an ordinal whose last pod is gone stays in range (missing until the end) is
    ``_stays_in_range``'s guess; ordinals not yet created during the initial bring-up are not drawn as missing.
    """
    end = end_time(result)
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
        _push(out[life.set_name][life.ordinal], Interval(life.since, end, life.state, life.is_new), final=True)
    stays = _stays_in_range(result, {(life.set_name, life.ordinal) for life in lives.values()})
    for key, t in gone_at.items():
        if stays(key, t):
            _push(out[key[0]][key[1]], Interval(t, end, MISSING, False))
    for name, sampled in (result.get("samples") or {}).items():
        if sampled.get("ordinals"):
            out[name] = _missing_where_in_range(out.get(name, {}), sampled["ordinals"], end)
    return {name: dict(sorted(lanes.items())) for name, lanes in out.items()}


def _missing_where_in_range(lanes: Lanes, ranges: list[list[Any]], end: float) -> Lanes:
    """With the recorded ordinal range over time, an ordinal is missing exactly while it is in range with no pod:
    from the start for ordinals not created yet (as the unavailable count has it), never once scaled away."""
    steps = [(float(step[0]), int(step[1]), int(step[2]), frozenset(step[3] if len(step) > 3 else ()))
             for step in ranges]
    wanted = {o for _, a, b, reserved in steps for o in range(a, b) if o not in reserved}
    out: Lanes = {}
    for ordinal in wanted | set(lanes):
        pods = [iv for iv in lanes.get(ordinal, ()) if iv.state != MISSING]
        holes: list[Interval] = []
        for i, (t, a, b, reserved) in enumerate(steps):
            until = steps[i + 1][0] if i + 1 < len(steps) else end
            if not a <= ordinal < b or ordinal in reserved or until <= t:
                continue
            cursor = t
            for iv in pods:
                if iv.end > cursor and iv.start < until:
                    if iv.start > cursor:
                        holes.append(Interval(cursor, iv.start, MISSING, False))
                    cursor = max(cursor, iv.end)
            if cursor < until:
                if holes and holes[-1].end == cursor:  # in range across a resize: one hole
                    holes[-1] = holes[-1]._replace(end=until)
                else:
                    holes.append(Interval(cursor, until, MISSING, False))
        out[ordinal] = sorted(pods + holes, key=lambda iv: (iv.start, iv.end))
    return out


def _stays_in_range(result: Mapping[str, Any], alive: set[tuple[str, int]]) -> Callable[[tuple[str, int], float], bool]:
    """Did an ordinal whose last pod went away at ``t`` stay wanted (missing), or was it scaled away?

    Exact when ``final.statefulSets[].spec.replicas`` is there. Otherwise: a hole below an ordinal alive at the end
    is missing; above, only a ``scale`` or ``apply`` step can have shrunk the range, so the ordinal left it only
    when such a step started before it went (template patches delete pods that a stuck rollout never recreates).
    """
    wanted: dict[str, OrdinalSpan] = {}
    for sts in (result.get("final") or {}).get("statefulSets") or ():
        spec = sts.get("spec") or {}
        if isinstance(spec.get("replicas"), int):
            wanted[sts["name"]] = ordinal_range({"spec": spec})  # reserved ordinals skipped, as the controller does
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


def unavailable_series(result: Mapping[str, Any], name: str, lanes: Lanes, end: float) -> Series:
    """The set's unavailable ordinals over the run: the recorder's samples when the document has them (the rule
    behind ``maxUnavailableObserved``: ordinals in range with no pod, terminating or not available), else the lanes'
    approximation (``unavailable_counts``). The last count is held until ``end``."""
    sampled = (result.get("samples") or {}).get(name)
    if not sampled:
        return Series(*unavailable_counts(lanes, end), measured_from=0.0, recorded=False)
    times = [float(t) for t, _ in sampled.get("unavailable") or ()]
    counts = [int(n) for _, n in sampled.get("unavailable") or ()]
    index = int(sampled.get("measuredFromStep") or 0)
    if not times or times[0] > 0:  # not sampled yet: the set did not exist
        times, counts, index = [0.0, *times], [0, *counts], index + 1 if times else 0
    if times[-1] < end:
        times, counts = [*times, end], [*counts, counts[-1]]
    return Series(times, counts, measured_from=float(sampled.get("measuredFrom") or 0.0), measured_index=index)


def rollout_peak(series: Series) -> int:
    """The largest count from where measuring starts (for recorded samples: ``maxUnavailableObserved``)."""
    return max(series.counts[series.measured_index:], default=0)


def sum_series(parts: list[Series]) -> Series:
    """Several sets' step functions added up (many small sets drawn as one), measured from the earliest start."""
    if not parts:
        return Series([0.0], [0])
    deltas: dict[float, int] = {}
    for part in parts:
        previous = 0
        for t, n in zip(part.times, part.counts, strict=True):
            deltas[t] = deltas.get(t, 0) + n - previous
            previous = n
    times, counts, total = [], [], 0
    for t in sorted(deltas):
        total += deltas[t]
        times.append(t)
        counts.append(total)
    since = min(p.measured_from for p in parts)
    index = max(0, sum(1 for t in times if t <= since) - 1)
    return Series(times, counts, measured_from=since, measured_index=index, recorded=all(p.recorded for p in parts))


def ready_counts(lanes: Lanes, end: float) -> tuple[list[float], list[int]]:
    """Ordinals that are Ready (a quorum set's participating members), from each change time on."""
    times, counts = _sweep(lanes, lambda iv: True if iv.state == READY else None, end)
    return times, counts.get(True, [0] * len(times))
