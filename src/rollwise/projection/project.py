"""One projection from a set's objects (the set, its pods, ControllerRevisions, member Leases, Events) to the
``RolloutView`` every face draws. Pure: the caller reads the world and the clock and passes both in.

Whether the rollout is done is never decided here afresh: the controllers' ``Progressing`` condition says why a
rollout waits or that it failed (a reason of the one table, ``api/reasons.py``), and completeness is the one rule
in ``api/rollout.py`` (the controller's ``RolloutComplete`` and the simulator's summary use it too), judged once
the controller has observed the set's latest generation. A condition reason the controller reserves for
"complete" counts as done as well, so a strategy that reports completion its own way (a rollout held at its
partition) flows through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rollwise.api.abort import is_aborted
from rollwise.api.identity import is_member_of, ordinal_of, ordinal_range, revision_of
from rollwise.api.leases import LEADER, MEMBER, lease_role
from rollwise.api.meta import controller_of, name_of, uid_of
from rollwise.api.ordinals import OrdinalSpan, position_in
from rollwise.api.predicates import (
    DEAD_WAITING_REASONS,
    is_available,
    is_failed,
    is_ready,
    is_terminating,
    unavailable_cause,
)
from rollwise.api.reasons import FAILING_REASONS, says_complete
from rollwise.api.revisions import template_of
from rollwise.api.rollout import rollout_complete
from rollwise.api.strategies import BLOCK_KEYS, ON_DELETE, ROLLING_KINDS, declared_type, partition_floor
from rollwise.controllers.quorum.settings import handed_to_quorum, read_settings
from rollwise.projection.canary import canary_of
from rollwise.projection.model import (
    ICON_BAD,
    ICON_OK,
    ICON_PAUSED,
    ICON_PROGRESSING,
    ICON_WAITING,
    ICON_WARNING,
    STATE_DEGRADED,
    STATE_HEALTHY,
    STATE_PAUSED,
    STATE_PROGRESSING,
    ConditionRow,
    EventRow,
    PodRow,
    RevisionRow,
    RolloutView,
)

__all__ = ["project"]

Obj = Mapping[str, Any]

EVENTS_KEPT = 12
_ROLE_WORDS = {LEADER: "leader", MEMBER: "follower"}


def project(
    sts: Obj,
    *,
    kind: str,
    pods: Iterable[Obj],
    revisions: Iterable[Obj] = (),
    leases: Iterable[Obj] = (),
    events: Iterable[Obj] = (),
    now: float,
) -> RolloutView:
    """The view of ``sts`` at ``now`` from its objects. Objects that are not the set's are ignored, so a caller
    may pass everything of the namespace."""
    name = name_of(sts)
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    strategy = spec.get("updateStrategy") or {}
    stype = declared_type(strategy)
    block = next(filter(None, map(strategy.get, BLOCK_KEYS)), None) or {}  # the first block given
    quorum = handed_to_quorum(sts)
    partition = partition_floor(strategy)
    mrs = float(spec.get("minReadySeconds") or 0)
    members = sorted((p for p in pods if is_member_of(sts, p)), key=ordinal_of)
    span = ordinal_range(sts)
    by_ordinal = {ordinal_of(p): p for p in members}
    update_rev = str(status.get("updateRevision") or "")
    current_rev = str(status.get("currentRevision") or "")
    owned = {name_of(r): r for r in revisions if _owned_by(r, sts)}

    conditions = tuple(ConditionRow(type=str(c.get("type", "")), status=str(c.get("status", "")),
                                    reason=str(c.get("reason", "")), message=str(c.get("message", "")))
                       for c in sorted(status.get("conditions") or (), key=lambda c: str(c.get("type", ""))))
    progressing = next((c for c in conditions if c.type == "Progressing"), None)
    observed = int(status.get("observedGeneration") or 0) >= int((sts.get("metadata") or {}).get("generation") or 0) \
        and bool(update_rev)
    held_floor = partition  # an index into the range, as the controller reads it (api/rollout.py: floor)
    complete = observed and not is_aborted(status) and (
        (progressing is not None and says_complete(progressing.status, progressing.reason))
        or rollout_complete([by_ordinal.get(o) for o in span],
                            outside_range=sum(1 for p in members if ordinal_of(p) not in span),
                            floor=held_floor, update_revision=update_rev, min_ready_seconds=mrs, now=now))
    failed = not complete and progressing is not None and progressing.status == "False" \
        and progressing.reason in FAILING_REASONS

    wait_message, named = _wait(conditions, progressing, quorum=quorum, set_name=name, span=span, members=members)
    waiting_on = "" if complete else named or _first_unavailable(members, span, mrs, now, name,
                                                                 descending=stype != ON_DELETE)
    outdated = [p for p in members if revision_of(p) != update_rev and position_in(span, ordinal_of(p)) >= held_floor]
    paused = not complete and not failed and stype == ON_DELETE and not quorum and bool(outdated) \
        and not any(not is_available(p, mrs, now) for p in members)

    roles = _roles(sts, members, leases)
    rows = tuple(_pod_row(by_ordinal.get(o), o, name=name, now=now, mrs=mrs, update_rev=update_rev,
                          current_rev=current_rev, roles=roles, waiting_on=waiting_on,
                          progress_message=wait_message)
                 for o in _ordinals(span, members))

    if complete:
        held = f", the rest held at partition {partition}" if partition else ""
        state, icon, message = STATE_HEALTHY, ICON_OK, (f"rollout complete: {int(status.get('updatedReplicas') or 0)}"
                                                         f" pods at revision {update_rev}{held}")
        if spec.get("paused") is True:
            message += "; paused (spec.paused): a new template would wait for a resume"
    elif failed and progressing is not None:
        state, icon, message = STATE_DEGRADED, ICON_BAD, f"{progressing.reason}: {progressing.message}"
    elif spec.get("paused") is True:
        state, icon = STATE_PAUSED, ICON_PAUSED  # Deployment's pause (controllers/statefulset/pause.py)
        message = (f"paused (spec.paused): {len(outdated)} pods stay at an old revision until resumed "
                   f"(rollwise rollout resume)")
    elif paused:
        state, icon = STATE_PAUSED, ICON_PAUSED
        message = f"OnDelete: {len(outdated)} pods at an old revision wait to be deleted by hand"
    elif not observed:
        state, icon, message = STATE_PROGRESSING, ICON_PROGRESSING, \
            "waiting for the controller to observe the latest spec"
    else:
        why = next((r.why for r in rows if r.name == waiting_on), "")
        state, icon = STATE_PROGRESSING, ICON_PROGRESSING
        message = wait_message or (f"waiting for {waiting_on}: {why}" if waiting_on else "waiting for the controller")

    return RolloutView(
        kind=kind, namespace=str((sts.get("metadata") or {}).get("namespace") or "default"), name=name, now=now,
        strategy=f"{stype} (QuorumAware)" if quorum else stype,
        pod_management=str(spec.get("podManagementPolicy") or "OrderedReady"),
        budget=str(block.get("maxUnavailable", 1)) if stype in ROLLING_KINDS else "",
        partition=partition, desired=int(spec.get("replicas", 1)),
        current=int(status.get("currentReplicas") or 0), updated=int(status.get("updatedReplicas") or 0),
        ready=int(status.get("readyReplicas") or 0), available=int(status.get("availableReplicas") or 0),
        current_revision=_revision(current_rev, name, owned, ("current",) + (("update",) if
                                                                           current_rev == update_rev else ())),
        update_revision=_revision(update_rev, name, owned, ("update",) + (("current",) if
                                                                        current_rev == update_rev else ())),
        conditions=conditions, state=state, icon=icon, message=message, done=complete, failed=failed,
        waiting_on=waiting_on, pods=rows, events=_events(events, name, {name_of(p) for p in members}),
        canary=canary_of(sts),
    )


def _wait(conditions: Sequence[ConditionRow], progressing: ConditionRow | None, *, quorum: bool, set_name: str,
          span: OrdinalSpan, members: Sequence[Obj]) -> tuple[str, str]:
    """(the controller's words for the wait, the pod they name or ""). The quorum-aware controller states its wait
    in its own condition (``AllMembersUpdated=False``: "waiting for etcd-1: ..."), every other strategy in
    ``Progressing``."""
    explaining = [c for c in conditions if quorum and c.status == "False" and c.type not in ("Progressing",
                                                                                              "Available")]
    explaining += [progressing] if progressing is not None else []
    for c in explaining:
        pod = _named_pod(c.message, set_name, span, members)
        if pod:
            return c.message, pod
    return (progressing.message if progressing is not None else ""), ""


def _owned_by(obj: Obj, sts: Obj) -> bool:
    ref = controller_of(obj)
    return ref is not None and (ref.get("uid") == uid_of(sts) or not uid_of(sts))


def _revision(rev: str, set_name: str, owned: Mapping[str, Obj], tags: tuple[str, ...]) -> RevisionRow | None:
    if not rev:
        return None
    found = owned.get(rev)
    images: tuple[str, ...] = ()
    if found is not None:
        containers = ((template_of(found).get("spec") or {}).get("containers")) or ()
        images = tuple(str(c.get("image", "")) for c in containers)
    return RevisionRow(name=rev, tags=tags, images=images)


def _ordinals(span: OrdinalSpan, members: Sequence[Obj]) -> list[int]:
    """Every ordinal in range, and any pod outside it (being scaled away), in order."""
    return sorted(set(span) | {ordinal_of(p) for p in members})


def _named_pod(message: str, set_name: str, span: OrdinalSpan, members: Sequence[Obj]) -> str:
    """The first of the set's pods a controller message names (``waiting for web-2 to become available: ...``)."""
    names = {f"{set_name}-{o}" for o in span} | {name_of(p) for p in members}
    for m in re.finditer(rf"\b{re.escape(set_name)}-\d+\b", message):
        if m.group(0) in names:
            return m.group(0)
    return ""


def _first_unavailable(members: Sequence[Obj], span: OrdinalSpan, mrs: float, now: float, set_name: str, *,
                       descending: bool) -> str:
    """Without a controller message naming one: the pod the update reaches first that is not available."""
    by_ordinal = {ordinal_of(p): p for p in members}
    for o in sorted(span, reverse=descending):
        pod = by_ordinal.get(o)
        if pod is None or not is_available(pod, mrs, now):
            return f"{set_name}-{o}"
    return ""


def _pod_state(pod: Obj, mrs: float, now: float) -> tuple[str, str]:
    """(a word for the pod's state, its icon)."""
    if is_terminating(pod):
        return "Terminating", ICON_PROGRESSING
    if is_failed(pod):
        return "Failed", ICON_BAD
    pstatus = pod.get("status") or {}
    for cs in pstatus.get("containerStatuses") or ():
        state = cs.get("state") or {}
        if "waiting" in state:
            reason = str(state["waiting"].get("reason") or "Waiting")
            return reason, ICON_BAD if reason in DEAD_WAITING_REASONS else ICON_PROGRESSING
        if "terminated" in state:
            return str(state["terminated"].get("reason") or "Terminated"), ICON_BAD
    phase = str(pstatus.get("phase") or "Pending")
    if phase != "Running":
        return phase, ICON_WAITING
    if not is_ready(pod):
        return "Running", ICON_PROGRESSING
    if not is_available(pod, mrs, now):
        return "Ready", ICON_PROGRESSING
    return "Running", ICON_OK


def _roles(sts: Obj, members: Sequence[Obj], leases: Iterable[Obj]) -> dict[str, str]:
    """Pod name → ``leader`` / ``follower`` where its member Lease says (the set's Lease-name template)."""
    by_name = {name_of(le): le for le in leases}
    if not by_name:
        return {}
    settings = read_settings(sts)[0]
    out = {}
    for pod in members:
        role = lease_role(by_name.get(settings.lease_name(name_of(pod))))
        if isinstance(role, str) and role in _ROLE_WORDS:
            out[name_of(pod)] = _ROLE_WORDS[role]
    return out


def _pod_row(pod: Obj | None, ordinal: int, *, name: str, now: float, mrs: float, update_rev: str,
             current_rev: str, roles: Mapping[str, str], waiting_on: str, progress_message: str) -> PodRow:
    pname = f"{name}-{ordinal}"
    waited = pname == waiting_on
    if pod is None:
        return PodRow(ordinal=ordinal, name=pname, exists=False, revision="", tag="", role="", phase="",
                      status="Missing", icon=ICON_WAITING, ready=False, available=False, restarts=0,
                      age_seconds=None, waited_on=waited, why=progress_message if waited else "no pod yet")
    rev = revision_of(pod)
    tag = "update" if rev == update_rev else "current" if rev == current_rev else "old"
    word, icon = _pod_state(pod, mrs, now)
    available = is_available(pod, mrs, now)
    why = "" if available else unavailable_cause(pod, mrs, now)
    if waited:
        why = why or progress_message  # the pod's own cause when it has one; else what the controller says
        if icon == ICON_OK:
            icon = ICON_WARNING
    created = (pod.get("metadata") or {}).get("creationTimestamp")
    restarts = sum(int(cs.get("restartCount") or 0) for cs in (pod.get("status") or {}).get("containerStatuses") or ())
    return PodRow(ordinal=ordinal, name=pname, exists=True, revision=rev, tag=tag,
                  role=roles.get(pname, ""), phase=str((pod.get("status") or {}).get("phase") or "Pending"),
                  status=word, icon=icon, ready=is_ready(pod), available=available, restarts=restarts,
                  age_seconds=None if created is None else max(0.0, now - float(created)),
                  waited_on=waited, why=why)


def _event_time(ev: Obj) -> float | None:
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        t = ev.get(key)
        if isinstance(t, (int, float)):
            return float(t)
    return None


def _events(events: Iterable[Obj], set_name: str, pod_names: set[str]) -> tuple[EventRow, ...]:
    """The newest events about the set or its pods, oldest first (``involvedObject``, or events.k8s.io's
    ``regarding``)."""
    rows = []
    for ev in events:
        about = ev.get("involvedObject") or ev.get("regarding") or {}
        obj = str(about.get("name") or "")
        if obj != set_name and obj not in pod_names:
            continue
        rows.append(EventRow(at=_event_time(ev), type=str(ev.get("type") or "Normal"),
                             reason=str(ev.get("reason") or ""), object=f"{about.get('kind', '')}/{obj}",
                             message=str(ev.get("message") or ev.get("note") or "")))
    rows.sort(key=lambda r: -1.0 if r.at is None else r.at)
    return tuple(rows[-EVENTS_KEPT:])
