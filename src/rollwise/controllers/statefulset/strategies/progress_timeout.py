"""``podProgressTimeoutSeconds`` (seed 000, alternative 1): an updated pod that is not Ready within the timeout
after its creation is deleted and recreated, for RollingUpdate and EnforcedRollingUpdate.

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
from rollwise.api.meta import annotations_of, name_of
from rollwise.controllers.census import quiet_at
from rollwise.controllers.plan import PatchSet
from rollwise.controllers.statefulset.context import Sync

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
    floor = int(block.get("partition") or 0)
    for name in list(kept):
        # A quiet pod is Ready: its record goes. The walk below covers the rest (census.py).
        index = quiet_at(sync.census, name)
        quiet = sync.replicas[index] if index is not None and index >= floor else None
        if quiet is not None and not sync.outdated(quiet) and not sync.terminating(quiet):
            kept.pop(name)
    for index in sync.touched():
        pod = sync.replicas[index]
        if pod is None or index < floor or sync.outdated(pod) or sync.terminating(pod):
            continue
        name = name_of(pod)
        count = int(kept.get(name, {}).get("count", 0))
        if p.is_running_and_ready(pod):
            kept.pop(name, None)  # made it
            continue
        stamp = pod["metadata"].get("creationTimestamp")
        created = sync.now if stamp is None else float(stamp)
        allowed = timeout_for(float(base), count)
        if sync.now - created > allowed:
            cause = p.unavailable_cause(pod, sync.min_ready_seconds, sync.now)
            sync.delete(pod, f"podProgressTimeoutSeconds: {name} not Ready {allowed:g} s after creation ({cause})")
            sync.event("PodProgressTimeout", f"Pod {name} was not Ready within {allowed:g} s of its creation "
                                             f"({cause}); deleting it (replacement {count + 1})", warning=True)
            sync.metric("statefulset_pod_progress_timeouts_total", 1, kind="counter")
            kept[name] = {"revision": sync.update_name, "count": count + 1}
        else:
            sync.requeue_at(created + allowed + 1e-3)
    if kept != records:
        value = json.dumps(kept, sort_keys=True) if kept else None
        sync.actions.append(PatchSet(merge={"metadata": {"annotations": {PROGRESS_ANNOTATION: value}}},
                                     reason="record pod progress timeouts for back-off"))
