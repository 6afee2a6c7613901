"""Summary figures recomputed from the event stream alone: an independent oracle for ``sim/record.py``.

The stream says when each pod was created, became Ready or not Ready, failed, was asked to go and was gone; the
scenario's steps say when the set was scaled. From these, the number of in-range ordinals that are missing or not
available (Ready for longer than minReadySeconds, not terminating, not Failed) is known at every instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from rollwise.api.identity import parent_and_ordinal

__all__ = ["figures_from_events", "max_unavailable_from_events"]


@dataclass(slots=True)
class _Pod:
    ready_since: float | None = None
    terminating: bool = False
    failed: bool = False


_SAME_INSTANT = 1e-12
"""Event times are rounded to the microsecond, so a pod exactly minReadySeconds past Ready at an event's instant can
sum to a hair under it: within this, it is the same instant, where availability (strictly after) does not hold."""


def _unavailable(pods: dict[int, _Pod], replicas: int, mrs: float, now: float) -> int:
    count = 0
    for ordinal in range(replicas):
        pod = pods.get(ordinal)
        ok = (pod is not None and not pod.terminating and not pod.failed and pod.ready_since is not None
              and (mrs <= 0 or pod.ready_since + mrs < now - _SAME_INSTANT))
        count += not ok
    return count


def max_unavailable_from_events(raw: dict[str, Any], events: list[dict[str, Any]], set_name: str) -> int:
    """``maxUnavailableObserved`` for ``set_name`` of a single-set scenario ``raw`` whose run produced ``events``."""
    return int(figures_from_events(raw, events, set_name, end=None)[0])


def figures_from_events(raw: dict[str, Any], events: list[dict[str, Any]], set_name: str,
                        *, end: float | None) -> tuple[int, float]:
    """(``maxUnavailableObserved``, ``unavailablePodSeconds`` up to ``end``) for ``set_name``, from the events.

    Between two instants the count only falls, when a Ready pod passes minReadySeconds; the integral splits there.
    """
    sts = next(o for o in raw["objects"] if o["metadata"]["name"] == set_name)
    mrs = float(sts["spec"].get("minReadySeconds") or 0)
    replicas = int(sts["spec"].get("replicas", 1))
    steps = raw.get("steps") or []
    template = sts["spec"]["template"]["spec"]["containers"][0]["image"]
    pods: dict[int, _Pod] = {}
    best = 0
    seconds = 0.0
    previous = 0.0
    restarted = False  # measured from t=0 unless a step changes the template
    by_instant: dict[float, list[dict[str, Any]]] = {}
    for e in events:
        by_instant.setdefault(e["t"], []).append(e)

    def integrate(start: float, stop: float) -> float:
        cuts = sorted({start, stop, *(p.ready_since + mrs for p in pods.values()
                                      if p.ready_since is not None and start < p.ready_since + mrs < stop)})
        # just after each cut the count holds until the next one (availability is strict: since + mrs < now)
        return sum(_unavailable(pods, replicas, mrs, a + 1e-9) * (b - a) for a, b in pairwise(cuts))

    for t in sorted(by_instant):
        seconds += integrate(previous, t)
        for e in by_instant[t]:
            if e["type"] == "Step":
                step = steps[e["index"]]
                if "scale" in step:
                    replicas = int(step["scale"]["replicas"])
                patch = step.get("patch")
                if patch:
                    image = patch["merge"]["spec"]["template"]["spec"]["containers"][0]["image"]
                    if image != template and not restarted:
                        best, seconds = 0, 0.0  # measuring restarts at the first template change, with this instant
                        restarted = True
                    template = image
                continue
            _apply(pods, e, set_name, t)
        best = max(best, _unavailable(pods, replicas, mrs, t))
        previous = t
    if end is not None:
        seconds += integrate(previous, end)
    return best, seconds


def _apply(pods: dict[int, _Pod], e: dict[str, Any], set_name: str, t: float) -> None:
    pod_name = e.get("pod")
    if not pod_name:
        return
    parent, ordinal = parent_and_ordinal(pod_name)
    if parent != set_name:
        return
    if e["type"] == "PodCreated":
        pods[ordinal] = _Pod()
    elif e["type"] == "PodGone":
        pods.pop(ordinal, None)
    elif ordinal in pods:
        pod = pods[ordinal]
        if e["type"] == "PodReady":
            pod.ready_since = t
        elif e["type"] == "PodNotReady":
            pod.ready_since = None
        elif e["type"] == "PodFailed":
            pod.failed = True
        elif e["type"] == "PodDeleteRequested":
            pod.terminating = True
