"""Carry out a controller's Plan against a cluster, with upstream's events and error handling (reference §6.1, §7.1).

Shared by every driver: the simulator, ``up`` and the explorer call ``execute`` with a store, the operator awaits
``execute_async`` with the API. Actions run in order. The first failed pod, claim or revision write stops the
remaining ones — the controller decides again on its next reconcile, level-triggered — but the status write and
history pruning are still attempted, as upstream always tries them (reference §5.2).

Why a generator: the rules above (order, what a failure stops, which errors are ignored, the events and their
wording) are written once, in ``steps``, which yields each request it makes (a ``Call``: a ``Cluster`` verb and
its arguments) and is sent the reply, or has the error thrown in at the same point, so its ``try`` blocks read as
if it made the call itself. The two drivers only carry calls: ``execute`` makes them on a ``Cluster``,
``execute_async`` awaits them on an ``AsyncVerbs`` on the running loop. The operator used to run the sync executor
in a worker thread over a cluster that called back into the loop for every write; the two thread hand-offs per
write cost more CPU than the write itself. Two copies of the executor, one sync and one async, would have let the
drivers' rules drift apart; callbacks or a sync facade would have kept a thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Mapping
from dataclasses import field
from typing import Any, Protocol

from rollwise.api.claim_templates import RESIZE_REFUSED_ANNOTATION
from rollwise.api.errors import AlreadyExists, ApiStatusError, Conflict, Forbidden, Invalid, NotFound
from rollwise.api.leases import LEADER, lease_role
from rollwise.api.lifecycle import LIFECYCLE_AT_ANNOTATION, LIFECYCLE_STATE_LABEL, PREPARING_DELETE
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.api.records import dataclass
from rollwise.cluster.protocol import Cluster, Propagation
from rollwise.cluster.resources import ResourceRef, ref_of
from rollwise.controllers.plan import (
    Action,
    AnnotatePod,
    ClearPreparingDelete,
    CreateAnalysisRun,
    CreateClaim,
    CreatePod,
    CreateRevision,
    DeleteAnalysisRun,
    DeletePod,
    DeleteRevision,
    EmitEvent,
    InPlaceUpdatePod,
    MarkPreparingDelete,
    PatchOwner,
    PatchSet,
    Plan,
    ResizeClaim,
    TerminateAnalysisRun,
    UpdateClaim,
    UpdatePod,
    UpdateRevision,
    WriteStatus,
)
from rollwise.invariants.adoption import adoption_refusal
from rollwise.runtime.calls import Call, Steps, call
from rollwise.runtime.execute_runs import run_steps

__all__ = ["AsyncVerbs", "Call", "CallHooks", "ControllerEvent", "Outcome", "execute", "execute_async", "steps"]

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


_Steps = Steps


class AsyncVerbs(Protocol):
    """The ``Cluster`` verbs the executor uses, as coroutines (the operator's API client, on its loop)."""

    async def get(self, kind: ResourceRef, namespace: str, name: str) -> Obj: ...

    async def create(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj: ...

    async def update(self, obj: Obj, *, actor: str = "user") -> Obj: ...

    async def update_status(self, obj: Obj, *, actor: str = "user", handed_over: bool = False) -> Obj: ...

    async def patch(self, kind: ResourceRef, namespace: str, name: str, merge: Mapping[str, Any], *,
                    actor: str = "user") -> Obj: ...

    async def delete(self, kind: ResourceRef, namespace: str, name: str, *,
                     grace_period_seconds: float | None = None, propagation: Propagation = "Background",
                     actor: str = "user") -> Obj | None: ...


class CallHooks(Protocol):
    """What a driver does around each call for its caller: ``before`` may change the call (the operator labels
    what it creates), ``after`` sees each successful reply (the read-your-writes record, ``runtime.recording``)."""

    def before(self, call: Call) -> Call: ...

    def after(self, call: Call, reply: Any) -> None: ...


def execute(plan: Plan, cluster: Cluster, *, sts: Obj, actor: str,
            emit: Callable[[ControllerEvent], None] | None = None, hooks: CallHooks | None = None) -> Outcome:
    """Run the plan's actions on ``cluster``; return the events emitted and the first error, if any."""
    run = steps(plan, sts=sts, actor=actor, emit=emit)
    step = _resume(run, None, None)
    while isinstance(step, Call):
        call = _before(hooks, step)
        step = _resume(run, *_after(hooks, call, *_reply(cluster, call)))
    return step


async def execute_async(plan: Plan, cluster: AsyncVerbs, *, sts: Obj, actor: str,
                        emit: Callable[[ControllerEvent], None] | None = None,
                        hooks: CallHooks | None = None) -> Outcome:
    """``execute``, each call awaited on the running loop."""
    run = steps(plan, sts=sts, actor=actor, emit=emit)
    try:
        step = _resume(run, None, None)
        while isinstance(step, Call):
            call = _before(hooks, step)
            step = _resume(run, *_after(hooks, call, *await _reply_async(cluster, call)))
        return step
    finally:
        run.close()  # cancelled mid-plan: the rest of the plan is dropped now, not when collected


def _reply(cluster: Cluster, call: Call) -> tuple[Any, Exception | None]:
    try:
        return getattr(cluster, call.verb)(*call.args, **call.kwargs), None
    except Exception as err:  # thrown into ``steps`` where the call was made: its handlers decide
        return None, err


async def _reply_async(cluster: AsyncVerbs, call: Call) -> tuple[Any, Exception | None]:
    try:
        return await getattr(cluster, call.verb)(*call.args, **call.kwargs), None
    except Exception as err:  # as in _reply; a cancellation is no Exception and ends the plan
        return None, err


def _before(hooks: CallHooks | None, call: Call) -> Call:
    return call if hooks is None else hooks.before(call)


def _after(hooks: CallHooks | None, call: Call, reply: Any, error: Exception | None) -> tuple[Any, Exception | None]:
    if hooks is not None and error is None:
        hooks.after(call, reply)
    return reply, error


def _resume(run: Generator[Call, Any, Outcome], reply: Any, error: Exception | None) -> Call | Outcome:
    """The plan's next call, or its Outcome once it is over."""
    try:
        return run.send(reply) if error is None else run.throw(error)
    except StopIteration as done:
        outcome: Outcome = done.value
        return outcome


def steps(plan: Plan, *, sts: Obj, actor: str,
          emit: Callable[[ControllerEvent], None] | None = None) -> Generator[Call, Any, Outcome]:
    """The executor: yields each call to make, is sent its reply (or thrown its error); returns the Outcome."""
    out = Outcome()
    set_name = name_of(sts)

    def event(event_type: str, reason: str, message: str) -> None:
        ev = ControllerEvent(event_type=event_type, reason=reason, message=message)
        out.events.append(ev)
        if emit is not None:
            emit(ev)

    current = sts
    owner_checked = False
    for action in plan.actions:
        if out.error is not None and not isinstance(action, ALWAYS_ATTEMPTED):
            continue
        if isinstance(action, (PatchOwner, UpdateClaim)) and action.adopt and not owner_checked:
            # canAdopt: once per round, before the first adoption, a live read of the owner (invariants.adoption).
            # A refusal ends the round with nothing more written, status included, as upstream's sync returns.
            owner_checked = True
            refused = yield from _refuse_adoption(sts)
            if refused is not None:
                out.error = refused
                return out
        try:
            if isinstance(action, PatchSet):
                # The status write that follows must carry the resourceVersion this patch produced.
                current = yield call("patch", ref_of(sts), namespace_of(sts), set_name, action.merge, actor=actor)
            else:
                yield from _run(action, sts=current, actor=actor, set_name=set_name, event=event)
            out.writes += not isinstance(action, EmitEvent)
        except ApiStatusError as err:
            _report(action, err, set_name=set_name, event=event)
            if out.error is None:
                out.error = err
    return out


def _run(action: Action, *, sts: Obj, actor: str, set_name: str, event: Callable[[str, str, str], None]) -> _Steps:
    # A plan's objects are immutable: the store may keep their parts (handed_over) instead of copying them.
    # The commonest first: nearly every reconcile writes status.
    if isinstance(action, WriteStatus):
        yield call("update_status", {**sts, "status": action.status}, actor=actor, handed_over=True)
    elif isinstance(action, CreateClaim):
        yield call("create", action.claim, actor=actor, handed_over=True)
        event("Normal", "SuccessfulCreate",
              f"create Claim {name_of(action.claim)} Pod {action.pod_name} in StatefulSet {set_name} success")
    elif isinstance(action, CreatePod):
        yield call("create", action.pod, actor=actor, handed_over=True)
        event("Normal", "SuccessfulCreate", f"create Pod {name_of(action.pod)} in StatefulSet {set_name} successful")
    elif isinstance(action, UpdatePod):
        yield call("update", action.pod, actor=actor)
        event("Normal", "SuccessfulUpdate", f"update Pod {name_of(action.pod)} in StatefulSet {set_name} successful")
    elif isinstance(action, InPlaceUpdatePod):
        # OpenKruise's event names; the images are patched through an update at the read resourceVersion.
        yield call("update", action.pod, actor=actor)
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
            yield call("patch", "Pod", action.namespace, action.name, {"metadata": meta}, actor=actor)
        except NotFound:
            return  # gone meanwhile: nothing left to prepare
        event("Normal", "PreparingDelete", f"pod {action.name} in StatefulSet {set_name} is PreparingDelete: "
                                           f"waiting for its pre-delete hook ({action.hook})")
    elif isinstance(action, ClearPreparingDelete):
        meta = {"labels": {LIFECYCLE_STATE_LABEL: None}, "annotations": {LIFECYCLE_AT_ANNOTATION: None}}
        if action.uid:
            meta["uid"] = action.uid
        try:
            yield call("patch", "Pod", action.namespace, action.name, {"metadata": meta}, actor=actor)
        except NotFound:
            return
        event("Normal", "PreparingDeleteCleared", f"pod {action.name} in StatefulSet {set_name} is no longer to be "
                                                  "deleted: its PreparingDelete mark is cleared")
    elif isinstance(action, UpdateClaim):
        yield call("update", action.claim, actor=actor)
    elif isinstance(action, ResizeClaim):
        yield from _resize(action, actor=actor, set_name=set_name, event=event)
    elif isinstance(action, DeletePod):
        if action.unless_leader and (yield from _leads_now(action.namespace, action.unless_leader)):
            # DEP-07 accepts that a Lease may lag; re-reading it right before the delete narrows that race.
            event("Normal", "QuorumAwareDeleteSkipped",
                  f"not deleting {action.name}: its member Lease {action.unless_leader} now says Leader")
            return
        try:
            yield call("delete", "Pod", action.namespace, action.name, actor=actor)
        except NotFound:
            return  # already gone: the goal is met (upstream ignores NotFound here)
        event("Normal", "SuccessfulDelete", f"delete Pod {action.name} in StatefulSet {set_name} successful")
    elif isinstance(action, AnnotatePod):
        yield from _annotate(action, actor=actor)
    elif isinstance(action, PatchOwner):
        owners: dict[str, object] = {"ownerReferences": action.owner_references or None}
        # Preconditions: the object the controller decided about, not a replacement nor one re-owned since.
        if action.uid:
            owners["uid"] = action.uid
        if action.resource_version:
            owners["resourceVersion"] = action.resource_version
        try:
            yield call("patch", action.kind, action.namespace, action.name, {"metadata": owners}, actor=actor)
        except NotFound:
            return
    elif isinstance(action, CreateRevision):
        yield call("create", action.revision, actor=actor, handed_over=True)
    elif isinstance(action, (CreateAnalysisRun, TerminateAnalysisRun, DeleteAnalysisRun)):
        yield from run_steps(action, actor=actor, set_name=set_name, event=event)
    elif isinstance(action, UpdateRevision):
        yield call("update", action.revision, actor=actor)
    elif isinstance(action, DeleteRevision):
        try:
            yield call("delete", "ControllerRevision", action.namespace, action.name, actor=actor)
        except NotFound:
            return
    elif isinstance(action, EmitEvent):
        event(action.event_type, action.event_reason, action.message)
    else:  # pragma: no cover - a new action type must be taught here
        raise TypeError(f"unknown action {type(action).__name__}")


def _resize(action: ResizeClaim, *, actor: str, set_name: str, event: Callable[[str, str, str], None]) -> _Steps:
    """Expand a claim; a refusal (its StorageClass does not allow expansion) is kept on the claim, so the controller
    can name it in the set's condition and stop retrying until the template asks for another size."""
    patch = {"spec": {"resources": {"requests": {"storage": action.storage}}},
             "metadata": {"annotations": {RESIZE_REFUSED_ANNOTATION: None}}}
    try:
        yield call("patch", "PersistentVolumeClaim", action.namespace, action.name, patch, actor=actor)
    except NotFound:
        return  # deleted meanwhile: a claim made again is made from the template, at its size
    except (Forbidden, Invalid) as err:
        note = {"metadata": {"annotations": {RESIZE_REFUSED_ANNOTATION: f"{action.storage}: {err}"}}}
        with contextlib.suppress(ApiStatusError):  # the refusal stops this plan all the same
            yield call("patch", "PersistentVolumeClaim", action.namespace, action.name, note, actor=actor)
        raise
    event("Normal", "SuccessfulResize",
          f"expand Claim {action.name} to {action.storage} in StatefulSet {set_name} success")


def _annotate(action: AnnotatePod, *, actor: str) -> _Steps:
    """Patch the pod's annotations with its uid as a precondition: a request made to one member must not land on
    its replacement (Conflict), and a pod gone meanwhile needs none."""
    meta: dict[str, object] = {"annotations": dict(action.annotations)}
    if action.uid:
        meta["uid"] = action.uid
    try:
        yield call("patch", "Pod", action.namespace, action.name, {"metadata": meta}, actor=actor)
    except (NotFound, Conflict):
        return


def _refuse_adoption(sts: Obj) -> Generator[Call, Any, ApiStatusError | None]:
    """The error that stops a round's adoptions, after an uncached read of the set; None when it may adopt."""
    try:
        fresh = yield call("get", ref_of(sts), namespace_of(sts), name_of(sts))
    except NotFound:
        fresh = None
    except ApiStatusError as err:
        return err
    refusal = adoption_refusal(sts, fresh)
    return None if refusal is None else Conflict(f"cannot adopt: {refusal}")


def _leads_now(namespace: str, lease_name: str) -> Generator[Call, Any, bool]:
    try:
        lease = yield call("get", "Lease", namespace, lease_name)
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
    elif isinstance(action, CreateAnalysisRun):
        event("Warning", "FailedCreate",
              f"create AnalysisRun {name_of(action.run)} in StatefulSet {set_name} failed error: {err}")
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

