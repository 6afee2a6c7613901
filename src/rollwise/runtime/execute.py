"""Carry out a controller's Plan against a cluster, with upstream's events and error handling (reference §6.1, §7.1).

Shared by every driver: the simulator calls it with the memory store, the operator (later) with the real API.
Actions run in order. The first failed pod, claim or revision write stops the remaining ones — the controller
decides again on its next reconcile, level-triggered — but the status write and history pruning are still
attempted, as upstream always tries them (reference §5.2).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import field

from rollwise.api.claim_templates import RESIZE_REFUSED_ANNOTATION
from rollwise.api.errors import AlreadyExists, ApiStatusError, Conflict, Forbidden, Invalid, NotFound
from rollwise.api.leases import LEADER, lease_role
from rollwise.api.lifecycle import LIFECYCLE_AT_ANNOTATION, LIFECYCLE_STATE_LABEL, PREPARING_DELETE
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.api.records import dataclass
from rollwise.cluster.protocol import Cluster
from rollwise.cluster.resources import ref_of
from rollwise.controllers.plan import (
    Action,
    AnnotatePod,
    ClearPreparingDelete,
    CreateClaim,
    CreatePod,
    CreateRevision,
    DeletePod,
    DeleteRevision,
    EmitEvent,
    InPlaceUpdatePod,
    MarkPreparingDelete,
    PatchOwner,
    PatchSet,
    Plan,
    ResizeClaim,
    UpdateClaim,
    UpdatePod,
    UpdateRevision,
    WriteStatus,
)

__all__ = ["ControllerEvent", "Outcome", "execute"]

ALWAYS_ATTEMPTED = (WriteStatus, DeleteRevision, EmitEvent)


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerEvent:
    """A Kubernetes Event the controller emits on the set (component ``statefulset-controller``)."""

    event_type: str
    reason: str
    message: str


@dataclass(slots=True, kw_only=True)
class Outcome:
    events: list[ControllerEvent] = field(default_factory=list)
    error: ApiStatusError | None = None
    writes: int = 0


def execute(plan: Plan, cluster: Cluster, *, sts: Obj, actor: str,
            emit: Callable[[ControllerEvent], None] | None = None) -> Outcome:
    """Run the plan's actions; return the events emitted and the first error, if any."""
    out = Outcome()
    set_name = name_of(sts)

    def event(event_type: str, reason: str, message: str) -> None:
        ev = ControllerEvent(event_type=event_type, reason=reason, message=message)
        out.events.append(ev)
        if emit is not None:
            emit(ev)

    current = sts
    for action in plan.actions:
        if out.error is not None and not isinstance(action, ALWAYS_ATTEMPTED):
            continue
        try:
            if isinstance(action, PatchSet):
                # The status write that follows must carry the resourceVersion this patch produced.
                current = cluster.patch(ref_of(sts), namespace_of(sts), set_name, action.merge, actor=actor)
            else:
                _run(action, cluster, sts=current, actor=actor, set_name=set_name, event=event)
            out.writes += not isinstance(action, EmitEvent)
        except ApiStatusError as err:
            _report(action, err, set_name=set_name, event=event)
            if out.error is None:
                out.error = err
    return out


def _run(action: Action, cluster: Cluster, *, sts: Obj, actor: str, set_name: str,
         event: Callable[[str, str, str], None]) -> None:
    # A plan's objects are immutable: the store may keep their parts (handed_over) instead of copying them.
    # The commonest first: nearly every reconcile writes status.
    if isinstance(action, WriteStatus):
        cluster.update_status({**sts, "status": action.status}, actor=actor, handed_over=True)
    elif isinstance(action, CreateClaim):
        cluster.create(action.claim, actor=actor, handed_over=True)
        event("Normal", "SuccessfulCreate",
              f"create Claim {name_of(action.claim)} Pod {action.pod_name} in StatefulSet {set_name} success")
    elif isinstance(action, CreatePod):
        cluster.create(action.pod, actor=actor, handed_over=True)
        event("Normal", "SuccessfulCreate", f"create Pod {name_of(action.pod)} in StatefulSet {set_name} successful")
    elif isinstance(action, UpdatePod):
        cluster.update(action.pod, actor=actor)
        event("Normal", "SuccessfulUpdate", f"update Pod {name_of(action.pod)} in StatefulSet {set_name} successful")
    elif isinstance(action, InPlaceUpdatePod):
        # OpenKruise's event names; the images are patched through an update at the read resourceVersion.
        cluster.update(action.pod, actor=actor)
        images = ", ".join(f"{c}={i}" for c, i in action.images)
        event("Normal", "SuccessfulUpdatePodInPlace",
              f"successfully update pod {name_of(action.pod)} in-place ({images}) in StatefulSet {set_name}")
    elif isinstance(action, MarkPreparingDelete):
        # OpenKruise marks through a patch too: the pod's own labels (the hook's, the agent's) are left alone.
        meta: dict[str, object] = {"labels": {LIFECYCLE_STATE_LABEL: PREPARING_DELETE},
                                   "annotations": {LIFECYCLE_AT_ANNOTATION: repr(action.at)}}
        if action.uid:
            meta["uid"] = action.uid  # a precondition (cluster.protocol.patch)
        try:
            cluster.patch("Pod", action.namespace, action.name, {"metadata": meta}, actor=actor)
        except NotFound:
            return  # gone meanwhile: nothing left to prepare
        event("Normal", "PreparingDelete", f"pod {action.name} in StatefulSet {set_name} is PreparingDelete: "
                                           f"waiting for its pre-delete hook ({action.hook})")
    elif isinstance(action, ClearPreparingDelete):
        meta = {"labels": {LIFECYCLE_STATE_LABEL: None}, "annotations": {LIFECYCLE_AT_ANNOTATION: None}}
        if action.uid:
            meta["uid"] = action.uid
        try:
            cluster.patch("Pod", action.namespace, action.name, {"metadata": meta}, actor=actor)
        except NotFound:
            return
        event("Normal", "PreparingDeleteCleared", f"pod {action.name} in StatefulSet {set_name} is no longer to be "
                                                  "deleted: its PreparingDelete mark is cleared")
    elif isinstance(action, UpdateClaim):
        cluster.update(action.claim, actor=actor)
    elif isinstance(action, ResizeClaim):
        _resize(action, cluster, actor=actor, set_name=set_name, event=event)
    elif isinstance(action, DeletePod):
        if action.unless_leader and _leads_now(cluster, action.namespace, action.unless_leader):
            # DEP-07 accepts that a Lease may lag; re-reading it right before the delete narrows that race.
            event("Normal", "QuorumAwareDeleteSkipped",
                  f"not deleting {action.name}: its member Lease {action.unless_leader} now says Leader")
            return
        try:
            cluster.delete("Pod", action.namespace, action.name, actor=actor)
        except NotFound:
            return  # already gone: the goal is met (upstream ignores NotFound here)
        event("Normal", "SuccessfulDelete", f"delete Pod {action.name} in StatefulSet {set_name} successful")
    elif isinstance(action, AnnotatePod):
        _annotate(action, cluster, actor=actor)
    elif isinstance(action, PatchOwner):
        try:
            cluster.patch(action.kind, action.namespace, action.name,
                          {"metadata": {"ownerReferences": action.owner_references or None}}, actor=actor)
        except NotFound:
            return
    elif isinstance(action, CreateRevision):
        cluster.create(action.revision, actor=actor, handed_over=True)
    elif isinstance(action, UpdateRevision):
        cluster.update(action.revision, actor=actor)
    elif isinstance(action, DeleteRevision):
        try:
            cluster.delete("ControllerRevision", action.namespace, action.name, actor=actor)
        except NotFound:
            return
    elif isinstance(action, EmitEvent):
        event(action.event_type, action.event_reason, action.message)
    else:  # pragma: no cover - a new action type must be taught here
        raise TypeError(f"unknown action {type(action).__name__}")


def _resize(action: ResizeClaim, cluster: Cluster, *, actor: str, set_name: str,
            event: Callable[[str, str, str], None]) -> None:
    """Expand a claim; a refusal (its StorageClass does not allow expansion) is kept on the claim, so the controller
    can name it in the set's condition and stop retrying until the template asks for another size."""
    patch = {"spec": {"resources": {"requests": {"storage": action.storage}}},
             "metadata": {"annotations": {RESIZE_REFUSED_ANNOTATION: None}}}
    try:
        cluster.patch("PersistentVolumeClaim", action.namespace, action.name, patch, actor=actor)
    except NotFound:
        return  # deleted meanwhile: a claim made again is made from the template, at its size
    except (Forbidden, Invalid) as err:
        note = {"metadata": {"annotations": {RESIZE_REFUSED_ANNOTATION: f"{action.storage}: {err}"}}}
        with contextlib.suppress(ApiStatusError):  # the refusal stops this plan all the same
            cluster.patch("PersistentVolumeClaim", action.namespace, action.name, note, actor=actor)
        raise
    event("Normal", "SuccessfulResize",
          f"expand Claim {action.name} to {action.storage} in StatefulSet {set_name} success")


def _annotate(action: AnnotatePod, cluster: Cluster, *, actor: str) -> None:
    """Patch the pod's annotations with its uid as a precondition: a request made to one member must not land on
    its replacement (Conflict), and a pod gone meanwhile needs none."""
    meta: dict[str, object] = {"annotations": dict(action.annotations)}
    if action.uid:
        meta["uid"] = action.uid
    try:
        cluster.patch("Pod", action.namespace, action.name, {"metadata": meta}, actor=actor)
    except (NotFound, Conflict):
        return


def _leads_now(cluster: Cluster, namespace: str, lease_name: str) -> bool:
    try:
        lease = cluster.get("Lease", namespace, lease_name)
    except NotFound:
        return False
    return lease_role(lease) == LEADER


def _report(action: Action, err: ApiStatusError, *, set_name: str, event: Callable[[str, str, str], None]) -> None:
    """Failure events with upstream's wording; AlreadyExists on create is reported without an event (§6.1)."""
    if isinstance(action, CreateClaim) and not isinstance(err, AlreadyExists):
        event("Warning", "FailedCreate", f"create Claim {name_of(action.claim)} for Pod {action.pod_name} "
                                         f"in StatefulSet {set_name} failed error: {err}")
    elif isinstance(action, CreatePod) and not isinstance(err, AlreadyExists):
        event("Warning", "FailedCreate",
              f"create Pod {name_of(action.pod)} in StatefulSet {set_name} failed error: {err}")
    elif isinstance(action, UpdatePod):
        event("Warning", "FailedUpdate",
              f"update Pod {name_of(action.pod)} in StatefulSet {set_name} failed error: {err}")
    elif isinstance(action, InPlaceUpdatePod):
        event("Warning", "FailedUpdatePodInPlace",
              f"failed to update pod {name_of(action.pod)} in-place in StatefulSet {set_name} error: {err}")
    elif isinstance(action, UpdateClaim):
        event("Warning", "FailedUpdate", f"update Claim {name_of(action.claim)} in StatefulSet {set_name} "
                                         f"failed error: {err}")
    elif isinstance(action, ResizeClaim):
        where = f"StorageClass {action.storage_class}" if action.storage_class else "no StorageClass named"
        event("Warning", "FailedResize", f"expand Claim {action.name} ({where}) to {action.storage} "
                                         f"in StatefulSet {set_name} failed error: {err}")
    elif isinstance(action, AnnotatePod):
        event("Warning", "FailedUpdate", f"annotate Pod {action.name} in StatefulSet {set_name} failed error: {err}")
    elif isinstance(action, MarkPreparingDelete):
        event("Warning", "FailedPreparingDelete",
              f"mark Pod {action.name} PreparingDelete in StatefulSet {set_name} failed error: {err}")
    elif isinstance(action, DeletePod):
        event("Warning", "FailedDelete", f"delete Pod {action.name} in StatefulSet {set_name} failed error: {err}")

