"""The timeline of a set's rollout so far, as lanes per ordinal (the lab's picture): each lane a run of segments,
one per stretch of time a pod spent in one band (its revision tag and whether it was available).

Built from the views the dashboard projects as changes arrive. What happened before the dashboard started is
read from the objects themselves: a pod's band began when it became Ready, or when it was created.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rollwise.projection import PodRow, RolloutView

__all__ = ["BANDS", "Timeline"]

BANDS = {
    "update-available": "update revision, available",
    "update-unavailable": "update revision, not available",
    "current-available": "current revision, available",
    "current-unavailable": "current revision, not available",
    "old-available": "older revision, available",
    "old-unavailable": "older revision, not available",
    "missing": "no pod",
}
"""Band key → legend, in the order the chart stacks them."""
MAX_SEGMENTS = 2000
"""Per set; the oldest closed segments go first, so a dashboard left open for days stays small."""


def _band(pod: PodRow) -> str:
    if not pod.exists:
        return "missing"
    return f"{pod.tag or 'old'}-{'available' if pod.available else 'unavailable'}"


@dataclass(slots=True)
class _Segment:
    pod: str
    band: str
    revision: str
    start: float
    end: float | None = None


class Timeline:
    """Segments per ordinal, extended by ``observe``; ``to_json`` gives the chart's data."""

    def __init__(self) -> None:
        self.segments: list[_Segment] = []
        self._open: dict[str, _Segment] = {}
        self.started: float | None = None
        self.now = 0.0

    def observe(self, view: RolloutView, *, since: dict[str, float] | None = None) -> None:
        """Extend the lanes to ``view.now``. ``since`` gives, for a pod seen for the first time, when its present
        band began (its Ready time or creation); otherwise the band begins now."""
        now = view.now
        self.now = now
        seen = set()
        for pod in view.pods:
            seen.add(pod.name)
            band = _band(pod)
            current = self._open.get(pod.name)
            if current is not None and current.band == band and current.revision == pod.revision:
                continue
            if current is not None:
                current.end = now
            start = now if current is not None else min(now, (since or {}).get(pod.name, now))
            segment = _Segment(pod=pod.name, band=band, revision=pod.revision, start=start)
            self.segments.append(segment)
            self._open[pod.name] = segment
            self.started = start if self.started is None else min(self.started, start)
        for name in [n for n in self._open if n not in seen]:  # scaled away
            self._open.pop(name).end = now
        if len(self.segments) > MAX_SEGMENTS:
            closed = [s for s in self.segments if s.end is not None]
            drop = {id(s) for s in closed[: len(self.segments) - MAX_SEGMENTS]}
            self.segments = [s for s in self.segments if id(s) not in drop]

    def to_json(self) -> dict[str, Any]:
        """Seconds since the first segment began; ``end`` of an open segment is now."""
        zero = self.started if self.started is not None else self.now
        return {
            "start": zero,
            "now": self.now - zero,
            "bands": BANDS,
            "segments": [{"pod": s.pod, "band": s.band, "revision": s.revision, "from": s.start - zero,
                          "to": (self.now if s.end is None else s.end) - zero} for s in self.segments],
        }
