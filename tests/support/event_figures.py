"""Summary figures recomputed from the event stream alone: an independent oracle for ``drivers/sim/record.py``.

The stream says when each pod was created, became Ready or not Ready, failed, was asked to go and was gone; the
scenario's steps say when the set was scaled. From these, the number of in-range ordinals that are missing or not
available (Ready for longer than minReadySeconds, not terminating, not Failed) is known at every instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rollwise.api.identity import parent_and_ordinal

__all__ = ["max_unavailable_from_events"]


@dataclass(slots=True)
class _Pod:
    ready_since: float | None = None
    terminating: bool = False
    failed: bool = False


def _unavailable(pods: dict[int, _Pod], replicas: int, mrs: float, now: float) -> int:
    count = 0
    for ordinal in range(replicas):
        pod = pods.get(ordinal)
        ok = (pod is not None and not pod.terminating and not pod.failed and pod.ready_since is not None
              and (mrs <= 0 or pod.ready_since + mrs < now))
        count += not ok
    return count


def max_unavailable_from_events(raw: dict[str, Any], events: list[dict[str, Any]], set_name: str) -> int:
    """``maxUnavailableObserved`` for ``set_name`` of a single-set scenario ``raw`` whose run produced ``events``."""
    sts = next(o for o in raw["objects"] if o["metadata"]["name"] == set_name)
    mrs = float(sts["spec"].get("minReadySeconds") or 0)
    replicas = int(sts["spec"].get("replicas", 1))
    steps = raw.get("steps") or []
    template = sts["spec"]["template"]["spec"]["containers"][0]["image"]
    pods: dict[int, _Pod] = {}
    changed_at: float | None = None  # measured from t=0 unless a step changes the template
    best = 0
    by_instant: dict[float, list[dict[str, Any]]] = {}
    for e in events:
        by_instant.setdefault(e["t"], []).append(e)
    for t in sorted(by_instant):
        for e in by_instant[t]:
            if e["type"] == "Step":
                step = steps[e["index"]]
                if "scale" in step:
                    replicas = int(step["scale"]["replicas"])
                patch = step.get("patch")
                if patch:
                    image = patch["merge"]["spec"]["template"]["spec"]["containers"][0]["image"]
                    if image != template and changed_at is None:
                        changed_at = t
                        best = 0  # measuring restarts at the first template change, with this instant
                    template = image
                continue
            pod_name = e.get("pod")
            if not pod_name:
                continue
            parent, ordinal = parent_and_ordinal(pod_name)
            if parent != set_name:
                continue
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
        best = max(best, _unavailable(pods, replicas, mrs, t))
    return best
