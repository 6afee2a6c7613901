"""``podProgressTimeoutSeconds`` (seed 000, alternative 1: "If pod doesn't become Ready within
podProgressTimeoutSeconds, delete and recreate it"), for RollingUpdate and EnforcedRollingUpdate.

- An updated pod that is not Ready within the timeout after its creation is deleted and recreated (a retry).
- Under RollingUpdate, an *outdated* pod from the partition up that has not been Ready for the timeout is deleted
  too, whatever revision it is at: that is the trap this field exists for (kubernetes#67250). A broken template
  followed by a fix leaves the broken pod outdated, and OrderedReady waits on it before anything else; replacing it
  brings it back at the fixed revision. Its clock starts at its creation or when it last stopped being Ready,
  whichever is later, so a healthy old pod that blips is not replaced at once. (EnforcedRollingUpdate replaces
  outdated pods that are not available anyway.) Pods below the partition are not the rollout's to touch.

Back-off: each replacement of the same ordinal at the same revision doubles the time the next pod gets (capped at
``MAX_BACKOFF_FACTOR`` times the timeout), so a permanently broken template does not spin. The count lives in the
set's annotation ``rollwise.dev/progress-timeouts`` (``{"<pod>": {"revision": ..., "count": n}}``): a controller
that remembers nothing between reconciles keeps its memory where the cluster holds it. An entry is dropped once
its pod is Ready or the update revision moves on.
"""

from __future__ import annotations

import json
from typing import Any

from rollwise.api import predicates as p
from rollwise.api.identity import revision_of
from rollwise.api.in_place import in_place_started_at
from rollwise.api.meta import annotations_of, format_time, name_of
from rollwise.controllers.census import quiet_at
from rollwise.controllers.plan import PatchSet
from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.replicas import replacement_is_outdated

__all__ = ["MAX_BACKOFF_FACTOR", "PROGRESS_ANNOTATION", "replace_timed_out_pods", "timeout_for"]

PROGRESS_ANNOTATION = "rollwise.dev/progress-timeouts"
MAX_BACKOFF_FACTOR = 16
_MAX_RECORDED_COUNT = 1 << 20  # far past any back-off (the factor stops growing at 16); beyond is not a real record


def _records(sync: Sync) -> dict[str, dict[str, Any]]:
    """The back-off records in the set's annotation. Anyone who may write the set may write it, so a record that is
    not ``{"revision": str, "count": int}`` with a count in range is dropped (the pod's back-off starts over) rather
    than read: a controller that meets a malformed value must not fail (DESIGN principle 5)."""
    try:
        raw = json.loads(annotations_of(sync.sts).get(PROGRESS_ANNOTATION) or "{}")
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's recursion limit
        return {}
    if not isinstance(raw, dict):
        return {}
    return {name: r for name, r in raw.items() if isinstance(r, dict) and _valid_count(r.get("count", 0))}


def _valid_count(count: Any) -> bool:
    return isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= _MAX_RECORDED_COUNT


def timeout_for(base: float, count: int) -> float:
    """The time the pod after ``count`` timed-out replacements gets: base, 2x, 4x ... up to 16x."""
    return float(base) * min(1 << min(count, 8), MAX_BACKOFF_FACTOR)


def replace_timed_out_pods(sync: Sync) -> None:
    block = sync.strategy_block or {}
    base = block.get("podProgressTimeoutSeconds")
    if not base:
        return
    records = _records(sync)
    # A record outlives its pod's deletion (the replacement inherits the count); it goes once the update revision
    # moves on, or once a pod of that name is Ready.
    kept = {name: r for name, r in records.items()
            if isinstance(r, dict) and r.get("revision") == sync.update_name}
    floor = sync.floor
    for name in list(kept):
        # A quiet pod is Ready: its record goes. The walk below covers the rest (census.py).
        index = quiet_at(sync.census, name)
        quiet = sync.replicas[index] if index is not None and index >= floor else None
        if quiet is not None and not sync.outdated(quiet) and not sync.terminating(quiet):
            kept.pop(name)
    for index in sync.touched():
        pod = sync.replicas[index]
        if pod is None or index < floor or sync.terminating(pod):
            continue
        if sync.outdated(pod):
            _replace_stuck_outdated(sync, pod, float(base))
            continue
        name = name_of(pod)
        count = int(kept.get(name, {}).get("count", 0))
        if p.is_running_and_ready(pod):
            kept.pop(name, None)  # made it
            continue
        created = _time(pod["metadata"].get("creationTimestamp"), sync.now)
        # A pod updated in place runs a container as new as the update: its clock starts there (api/in_place.py).
        created = max(created, in_place_started_at(pod) or created)
        allowed = timeout_for(float(base), count)
        if sync.now - created > allowed:
            cause = p.unavailable_cause(pod, sync.min_ready_seconds, sync.now)
            if not sync.disrupt(pod, f"podProgressTimeoutSeconds: {name} not Ready {allowed:g} s after creation "
                                     f"({cause})"):
                continue
            sync.event("PodProgressTimeout", f"Pod {name} was not Ready within {allowed:g} s of its creation "
                                             f"({cause}); deleting it (replacement {count + 1})", warning=True)
            sync.metric("statefulset_pod_progress_timeouts_total", 1, kind="counter")
            kept[name] = {"revision": sync.update_name, "count": count + 1}
        else:
            sync.requeue_at(created + allowed + 1e-3)
            if count:
                # When, not in how long: a countdown would change the message, and the status, every second.
                times = "time" if count == 1 else "times"
                sync.retried[name] = f"; replaced {count} {times}, next try at {format_time(created + allowed)}"
    # The pods being retried: deleting one, or creating it again, is not progress (progress.py).
    for name, r in kept.items():
        if int(r.get("count", 0)) > 0:
            sync.retried.setdefault(name, "")
    if kept != records:
        value = json.dumps(kept, sort_keys=True) if kept else None
        sync.actions.append(PatchSet(merge={"metadata": {"annotations": {PROGRESS_ANNOTATION: value}}},
                                     reason="record pod progress timeouts for back-off"))


def _time(value: Any, default: float) -> float:
    """A timestamp as the controller's view holds it (seconds), or ``default`` when it is absent or not a number
    (anyone may write a pod's status; DESIGN principle 5)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return default
    try:
        return float(value)
    except ValueError:
        return default


def _replace_stuck_outdated(sync: Sync, pod: Any, base: float) -> None:
    """seed 000 alternative 1 for a pod at an older revision (the trap after a fix, kubernetes#67250)."""
    if sync.tolerates_broken_outdated or p.is_running_and_ready(pod) or replacement_is_outdated(sync, pod):
        return
    since = _time(pod["metadata"].get("creationTimestamp"), sync.now)
    ready = p.condition(pod, "Ready")
    if ready is not None:
        since = max(since, _time(ready.get("lastTransitionTime"), since))
    if sync.now - since <= base:
        sync.requeue_at(since + base + 1e-3)
        return
    name = name_of(pod)
    cause = p.unavailable_cause(pod, sync.min_ready_seconds, sync.now)
    if not sync.disrupt(pod, f"podProgressTimeoutSeconds: {name} is outdated and not Ready for {base:g} s ({cause})"):
        return
    sync.event("PodProgressTimeout", f"Pod {name} at older revision {revision_of(pod)} was not Ready for {base:g} s "
                                     f"({cause}); replacing it with revision {sync.update_name}", warning=True)
    sync.metric("statefulset_pod_progress_timeouts_total", 1, kind="counter")
