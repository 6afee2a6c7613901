"""The in-place update rule (``podUpdatePolicy``, api/in_place.py): a pod is never counted available while its
containers restart for an in-place update.

Judged three ways on every decision, each from facts the controller did not compute:

- a pod carrying the in-place record whose changed containers do not yet run their spec image (status image differs
  from the spec's, or the container is not running) is not available by the one predicate;
- a status the decision writes counts no more pods available than the pods it saw, less the ones it updates in
  place in the same plan (their containers are about to restart);
- the record is cleared only from a pod whose changed containers run the spec's image.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from rollwise.api import predicates as p
from rollwise.api.in_place import IN_PLACE_ANNOTATION
from rollwise.api.meta import Obj, name_of
from rollwise.controllers.plan import InPlaceUpdatePod, UpdatePod, WriteStatus
from rollwise.invariants.decision import Decision

__all__ = ["in_place_restart", "restarting_counted_available"]


def _changed(pod: Mapping[str, Any]) -> list[str]:
    """The containers the pod's in-place record names ([] without one)."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(IN_PLACE_ANNOTATION)
    try:
        record = json.loads(raw) if isinstance(raw, str) else {}
    except ValueError:
        return []
    ids = record.get("imageIDs") if isinstance(record, dict) else None
    return sorted(ids) if isinstance(ids, dict) else []


def _restarting(pod: Mapping[str, Any], containers: list[str]) -> list[str]:
    """Which of ``containers`` do not run the spec's image yet."""
    spec = {c.get("name"): c.get("image") for c in (pod.get("spec") or {}).get("containers") or ()}
    statuses = {cs.get("name"): cs for cs in (p.status_of(pod).get("containerStatuses") or ())
                if isinstance(cs, dict)}
    out = []
    for name in containers:
        cs = statuses.get(name) or {}
        state = cs.get("state")
        if cs.get("image") != spec.get(name) or not (isinstance(state, dict) and "running" in state):
            out.append(name)
    return out


def restarting_counted_available(pods: Iterable[Obj], min_ready_seconds: float, now: float) -> list[str]:
    """Pods whose in-place restart is under way that the one availability predicate counts available."""
    return [f"{name_of(pod)} counted available while its containers restart for an in-place update"
            for pod in pods if (changed := _changed(pod)) and _restarting(pod, changed)
            and p.is_available(pod, min_ready_seconds, now)]


def in_place_restart(d: Decision) -> list[str]:
    problems = restarting_counted_available(d.view.pods, d.min_ready_seconds, d.view.now)
    mrs, now = d.min_ready_seconds, d.view.now
    patched = {name_of(a.pod) for a in d.actions if isinstance(a, InPlaceUpdatePod)}
    seen: dict[str, Obj] = {name_of(pod): pod for pod in d.view.pods}
    for action in d.actions:
        if isinstance(action, WriteStatus) and patched:
            bound = sum(1 for pod in d.view.pods if p.is_created(pod) and p.is_available(pod, mrs, now)
                        and name_of(pod) not in patched)
            if int(action.status.get("availableReplicas") or 0) > bound:
                problems.append(f"status counts {action.status.get('availableReplicas')} available while updating "
                                f"{', '.join(sorted(patched))} in place (at most {bound})")
        elif isinstance(action, UpdatePod):
            before = seen.get(name_of(action.pod))
            changed = _changed(before) if before is not None else []
            if changed and not _changed(action.pod) and (left := _restarting(before, changed)):  # type: ignore[arg-type]
                problems.append(f"in-place record of {name_of(action.pod)} cleared while {', '.join(left)} "
                                f"does not run its new image")
    return problems
