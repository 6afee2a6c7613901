"""Quiescence: a reconcile of an unchanged world writes nothing (issue 38).

Each write wakes every watcher of the object, the writing controller's own informer included; a controller that
writes without a change reconciles again, writes again, and spins (a paused set rewrote its status 40-66 times a
second, Progressing's ``lastUpdateTime`` set to now on every reconcile). Sieve (OSDI '22) and Acto (SOSP '23) found
the class in mature operators. Two forms, one rule:

- ``noop_writes``: within one decision, a write equal to the object it replaces, as the controller read it (the
  status it read, a patch that changes nothing, annotations or owner references already as they are). Judged on
  the view, not the truth: a write that changes nothing in the controller's own view is pointless whatever the
  store holds.
- ``settled_writes``: across two decisions of one controller on one set, the second made on the world the first
  left (it wrote at most the set's status and events, and nothing the second reads has changed since) and before
  the time the first said time alone changes something (its requeue): the second must write nothing. A wall-clock
  value in a status or message that moves on every reconcile fails here; one that states a moment does not.

The explorer reconciles twice on every state (the second time a moment later, within the first's requeue); the
simulator counts what the second form finds in a run; ``rollwise check-trace`` judges both on a decision log.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.lifecycle import LIFECYCLE_AT_ANNOTATION, is_preparing_delete
from rollwise.api.meta import Obj, name_of
from rollwise.cluster.store.patching import merge_patch
from rollwise.controllers.plan import (
    Action,
    AnnotatePod,
    ClearPreparingDelete,
    EmitEvent,
    PatchOwner,
    PatchSet,
    UpdateClaim,
    UpdatePod,
    UpdateRevision,
    WriteStatus,
)
from rollwise.controllers.view import SetView
from rollwise.invariants.decision import Decision

__all__ = ["before_requeue", "left_as_it_was", "noop_writes", "settled_writes", "write_words"]

_SERVER_KEPT = ("resourceVersion", "managedFields", "generation", "creationTimestamp", "uid")
"""Metadata the API server sets: a write never changes it by itself, so it is not what a write replaces."""


def write_words(action: Action) -> str:
    """An action as a violation names it."""
    if isinstance(action, EmitEvent):
        return f"event {action.event_reason}"
    return action.what()


def noop_writes(d: Decision) -> list[str]:
    """Each write of the decision equal to the object it replaces in the view the controller decided from."""
    view = d.view
    return [f"{write_words(a)}: equal to the object it replaces (a write without a change)"
            for a in d.actions if _changes_nothing(a, view)]


def settled_writes(first: Decision, requeue: float | None, second: Decision) -> list[str]:
    """The second decision's writes, when it was made on the world the first left (``left_as_it_was``) before
    ``first``'s requeue came due (None: time alone changes nothing): nothing changed, so nothing is to be written."""
    if not second.actions or not left_as_it_was(first, second.view):
        return []
    if not before_requeue(first.view.now, requeue, second.view.now):
        return []
    later = second.view.now - first.view.now
    return [f"{write_words(a)} {later:g} s after a reconcile of the same world (nothing changed but the clock)"
            for a in second.actions]


def before_requeue(first: float, requeue: float | None, second: float) -> bool:
    """A reconcile at ``second`` comes before the time the one at ``first`` said time alone changes something
    (``requeue`` seconds later; None: never). Once it is due, a write may be time's change (a pod available after
    minReadySeconds, a deadline passed), and the rule says nothing."""
    return requeue is None or second < first + requeue


def left_as_it_was(first: Decision, later: SetView) -> bool:
    """``later`` is the world ``first`` left: ``first`` wrote at most the set's status (and events), every pod,
    claim, revision, lease, disruption budget and analysis run ``later`` reads is the one ``first`` read, the set is
    unchanged but for its status, and its status is what ``first`` wrote (or read, if it wrote none), as the API
    server keeps times (whole seconds)."""
    written: Obj | None = None
    for action in first.actions:
        if isinstance(action, WriteStatus):
            written = action.status
        elif not isinstance(action, EmitEvent):
            return False
    before = first.view
    if any(_versions(was) != _versions(now) for was, now in zip(_reads(before), _reads(later), strict=True)):
        return False
    if _but_status(before.set) != _but_status(later.set):
        return False
    status = written if written is not None else before.set.get("status") or {}
    return bool(_as_stored(status) == _as_stored(later.set.get("status") or {}))


def _reads(view: SetView) -> tuple[Any, ...]:
    """What a controller reads besides its set: pods, claims, revisions, leases, disruption budgets and the runs of
    its canary's analysis steps (a run's verdict moves a canary on, or aborts it)."""
    return (view.pods, view.claims.values(), view.revisions, view.leases.values(), view.budgets,
            view.analysis_runs.values())


def _changes_nothing(action: Action, view: SetView) -> bool:
    if isinstance(action, WriteStatus):
        return bool(_as_stored(action.status) == _as_stored(view.set.get("status") or {}))
    if isinstance(action, PatchSet):
        return bool(merge_patch(view.set, action.merge) == view.set)
    if isinstance(action, AnnotatePod):
        pod = _by_name(view.pods, action.name)
        have = ((pod or {}).get("metadata") or {}).get("annotations") or {}
        return pod is not None and all(have.get(k) == v if v is not None else k not in have
                                       for k, v in action.annotations)
    if isinstance(action, ClearPreparingDelete):
        pod = _by_name(view.pods, action.name)
        return pod is not None and not is_preparing_delete(pod) and LIFECYCLE_AT_ANNOTATION not in (
            pod["metadata"].get("annotations") or {})
    if isinstance(action, PatchOwner):
        target = _owned(view, action.kind, action.name)
        return target is not None and (target["metadata"].get("ownerReferences") or []) == action.owner_references
    if isinstance(action, UpdatePod):
        return _same_object(_by_name(view.pods, name_of(action.pod)), action.pod)
    if isinstance(action, UpdateClaim):
        return _same_object(view.claims.get(name_of(action.claim)), action.claim)
    if isinstance(action, UpdateRevision):
        return _same_object(_by_name(view.revisions, name_of(action.revision)), action.revision)
    return False  # creates, deletes, in-place updates and marks always change what they name; events are new


def _owned(view: SetView, kind: str, name: str) -> Obj | None:
    if kind == "Pod":
        return _by_name(view.pods, name)
    if kind == "ControllerRevision":
        return _by_name(view.revisions, name)
    if kind == "PersistentVolumeClaim":
        return view.claims.get(name)
    return None


def _by_name(objs: Sequence[Obj], name: str) -> Obj | None:
    return next((o for o in objs if name_of(o) == name), None)


def _same_object(old: Obj | None, new: Obj) -> bool:
    return old is not None and _but_server_kept(old) == _but_server_kept(new)


def _but_server_kept(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_KEPT}
    return {**obj, "metadata": meta}


def _but_status(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in _but_server_kept(obj).items() if k != "status"}


def _versions(objs: Any) -> list[tuple[str, str]] | list[Any]:
    """Each object's name and resourceVersion; the objects themselves where one has no resourceVersion (a view
    built by hand)."""
    items = list(objs)
    rvs = [(name_of(o), str(o["metadata"].get("resourceVersion") or "")) for o in items]
    if all(rv for _, rv in rvs):
        return sorted(rvs)
    return sorted((_freeze(o) for o in items), key=repr)


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _as_stored(value: Any, key: str = "") -> Any:
    """A status as the API server keeps it: ``metav1.Time`` fields in whole seconds (a float time written comes
    back floored), so a write and what is read after it compare equal."""
    if isinstance(value, Mapping):
        return {k: _as_stored(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_stored(v) for v in value]
    if key.endswith("Time") and isinstance(value, int | float) and not isinstance(value, bool):
        return math.floor(value)
    return value
