"""The timeline of a set's rollout so far, as lanes per ordinal (the lab's picture): each lane a run of segments,
one per stretch of time a pod ran one revision, available or not.

A segment is coloured by the revision its pod ran *then* (one colour per revision, in the order the timeline first
met them), never by how that revision relates to the set's update revision of the moment: a patch moves the update
revision, not the pods, so a pod it has not touched keeps its lane unchanged.

Built from the views the dashboard projects as changes arrive. What happened before the dashboard started is
read from the objects themselves: a pod's band began when it became Ready, or when it was created.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rollwise.projection import PodRow, RolloutView

__all__ = ["BANDS", "Timeline"]

BANDS = {
    "available": "available",
    "unavailable": "not available",
    "missing": "no pod",
}
"""Band key → legend: a revision's colour, solid while available, pale while not; no pod has its own."""
MAX_SEGMENTS = 2000
"""Per set; the oldest closed segments go first, so a dashboard left open for days stays small."""


def _band(pod: PodRow) -> str:
    if not pod.exists:
        return "missing"
    return "available" if pod.available else "unavailable"


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
        self.revisions: list[str] = []
        """Every revision a segment ran, in the order first met: a revision's colour is its place here."""
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
            if pod.revision and pod.revision not in self.revisions:
                self.revisions.append(pod.revision)
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
            "revisions": list(self.revisions),
            "segments": [{"pod": s.pod, "band": s.band, "revision": s.revision, "from": s.start - zero,
                          "to": (self.now if s.end is None else s.end) - zero} for s in self.segments],
        }
