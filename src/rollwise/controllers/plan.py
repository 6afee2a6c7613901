"""What a controller decides: actions as data, each with its reason, and the waits that hold it back.

A controller returns a ``Plan``; a driver executes it in order. Every action names the object it touches and
why, so the event stream, ``rollwise plan`` and the ``Progressing`` message all render one field.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from rollwise.api.meta import Obj, name_of
from rollwise.api.records import dataclass

__all__ = [
    "Action",
    "AnnotatePod",
    "Blocked",
    "ClearPreparingDelete",
    "CreateAnalysisRun",
    "CreateClaim",
    "CreatePod",
    "CreateRevision",
    "DeleteAnalysisRun",
    "DeletePod",
    "DeleteRevision",
    "EmitEvent",
    "InPlaceUpdatePod",
    "MarkPreparingDelete",
    "MetricSample",
    "PatchOwner",
    "PatchSet",
    "Plan",
    "ResizeClaim",
    "TerminateAnalysisRun",
    "UpdateClaim",
    "UpdatePod",
    "UpdateRevision",
    "WriteStatus",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """Base of every action: ``reason`` says why, in words a person reads in an event or in ``rollwise plan``."""

    reason: str = ""

    def what(self) -> str:
        """What the action does, in words, without the reason."""
        return type(self).__name__

    def describe(self) -> str:
        """One line for a person (``rollwise plan``): what, and why."""
        return f"{self.what()} — {self.reason}" if self.reason else self.what()


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateClaim(Action):
    claim: Obj
    pod_name: str

    def what(self) -> str:
        return f"create claim {name_of(self.claim)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateAnalysisRun(Action):
    """Create the AnalysisRun of a canary's analysis step (controllers/statefulset/analysis.py)."""

    run: Obj

    def what(self) -> str:
        return f"create analysis run {name_of(self.run)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminateAnalysisRun(Action):
    """Set ``spec.terminate`` on a running AnalysisRun the rollout no longer waits on (Argo's
    ``cancelAnalysisRuns``): it stops measuring and ends with what it has. ``uid``: a precondition, so a run made
    again under the name is not touched."""

    name: str
    namespace: str
    uid: str

    def what(self) -> str:
        return f"terminate analysis run {self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteAnalysisRun(Action):
    """Delete a completed AnalysisRun beyond the set's run history (Argo's ``deleteAnalysisRuns``)."""

    name: str
    namespace: str

    def what(self) -> str:
        return f"delete analysis run {self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateClaim(Action):
    """Replace a claim's owner references (retention policy); ``claim`` carries the resourceVersion it was read at.
    ``adopt``: the set's own reference is added, so the executor reads the set live first, as for ``PatchOwner``."""

    claim: Obj
    adopt: bool = False

    def what(self) -> str:
        return f"update owner references of claim {name_of(self.claim)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ResizeClaim(Action):
    """KEP-4650 InPlace: expand an existing claim, a merge patch of ``spec.resources.requests.storage``."""

    name: str
    namespace: str
    storage: str
    storage_class: str = ""
    """The claim's StorageClass (empty: none named), for the refusal's event."""

    def what(self) -> str:
        return f"expand claim {self.name} to {self.storage}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePod(Action):
    pod: Obj
    ordinal: int
    revision: str

    def what(self) -> str:
        return f"create pod {name_of(self.pod)} at revision {self.revision}"


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdatePod(Action):
    """An in-place update (identity or storage repair); never a template change."""

    pod: Obj

    def what(self) -> str:
        return f"update pod {name_of(self.pod)} in place"


@dataclass(frozen=True, slots=True, kw_only=True)
class InPlaceUpdatePod(Action):
    """Update a pod's container images to the update revision instead of deleting it (``podUpdatePolicy``,
    api/in_place.py): ``pod`` is the whole pod as it is to be written, at the resourceVersion it was read at, so a
    pod that changed since is not overwritten (Conflict; the next reconcile decides again)."""

    pod: Obj
    images: tuple[tuple[str, str], ...]
    """(container, new image), for the event stream."""
    revision: str
    """The revision label the pod had (the update revision is the one ``pod`` carries)."""

    def what(self) -> str:
        images = ", ".join(f"{c}={i}" for c, i in self.images)
        return f"update the images of pod {name_of(self.pod)} in place ({images}; was revision {self.revision})"


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkPreparingDelete(Action):
    """Label a pod ``rollwise.dev/lifecycle-state: PreparingDelete`` (and annotate when) instead of deleting it: its
    pre-delete hook holds (api/lifecycle.py), and the application's agent drains it and releases the hook first. A
    merge patch with the pod's uid as precondition, so a pod made again under the same name is not marked."""

    name: str
    namespace: str
    uid: str
    at: float
    """The controller's ``now``: when the wait began (``timeoutSeconds`` counts from it)."""
    hook: str
    """What of the hook the pod carries, in words, for the event stream."""

    def what(self) -> str:
        return f"mark pod {self.name} PreparingDelete (its pre-delete hook holds: {self.hook})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClearPreparingDelete(Action):
    """Take the PreparingDelete mark off a pod the controller no longer deletes (the partition now covers it, the
    set was reverted or scaled back up): it is a pod like any other again (hooks.py)."""

    name: str
    namespace: str
    uid: str

    def what(self) -> str:
        return f"clear the PreparingDelete mark of pod {self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletePod(Action):
    name: str
    namespace: str
    uid: str
    revision: str
    """The revision label of the pod being deleted, for the event stream."""
    unless_leader: str | None = None
    """A Lease name: re-read it right before deleting, and skip the delete if it now names this member Leader
    (narrows the lease-lag race DEP-07 accepts)."""

    def what(self) -> str:
        return f"delete pod {self.name} (revision {self.revision})"


@dataclass(frozen=True, slots=True, kw_only=True)
class AnnotatePod(Action):
    """A merge patch of a pod's annotations (a value None removes the key), for a request to the application's own
    agent (the quorum-aware leader-transfer hook); ``uid`` guards against writing to a newer pod of that name."""

    name: str
    namespace: str
    uid: str
    annotations: tuple[tuple[str, str | None], ...]

    def what(self) -> str:
        return f"annotate pod {self.name} (" + ", ".join(f"{k}={v}" for k, v in self.annotations) + ")"


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchOwner(Action):
    """Adopt (add our controller reference) or release (remove it) a pod or revision, as a merge patch.

    ``uid`` and ``resource_version`` are the object's as the controller saw it: preconditions of the patch, so a
    pod replaced or re-owned meanwhile is not touched (upstream's ControllerRefManager patches with the uid).
    ``adopt``: the patch adds the set's reference; the executor then reads the set live first (``canAdopt``)."""

    kind: str
    name: str
    namespace: str
    owner_references: list[dict[str, Any]]
    uid: str = ""
    resource_version: str = ""
    adopt: bool = False

    def what(self) -> str:
        return f"set owner references of {self.kind} {self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class PatchSet(Action):
    """A merge patch to the set's own metadata (an annotation where the controller keeps memory across restarts)."""

    merge: dict[str, Any]

    def what(self) -> str:
        return "annotate the StatefulSet"


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateRevision(Action):
    revision: Obj

    def what(self) -> str:
        return f"create revision {name_of(self.revision)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateRevision(Action):
    """Rollback: an earlier revision becomes the newest again by taking the next ``.revision`` number."""

    revision: Obj

    def what(self) -> str:
        return f"reuse revision {name_of(self.revision)}"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRevision(Action):
    name: str
    namespace: str

    def what(self) -> str:
        return f"delete revision {self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteStatus(Action):
    """Replace the set's whole status (upstream UpdateStatus); written only when it changed."""

    status: Obj

    def what(self) -> str:
        return "write status"


@dataclass(frozen=True, slots=True, kw_only=True)
class EmitEvent(Action):
    """A Kubernetes Event on the set that does not come from the outcome of a write (those the driver emits)."""

    event_type: str = "Normal"
    event_reason: str = ""
    message: str = ""

    def describe(self) -> str:
        return f"event {self.event_reason}: {self.message}"


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricSample:
    """A metric the controller reports: a gauge's value, or a counter's increment (``kind``)."""

    name: str
    value: float
    kind: str = "gauge"
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Blocked:
    """A wait: the pod the controller is waiting for (or "" for the set) and the cause, in plain words."""

    pod: str
    cause: str

    def __str__(self) -> str:
        if not self.pod:
            return f"waiting: {self.cause}"
        sep = " " if self.cause.startswith("to ") else ": "
        return f"waiting for {self.pod}{sep}{self.cause}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """The ordered actions of one reconcile, the waits that stopped it, and when to look again.

    ``requeue_after`` is seconds from the view's ``now`` (None: only a change wakes the controller).
    """

    actions: tuple[Action, ...] = ()
    blocked: tuple[Blocked, ...] = ()
    requeue_after: float | None = None
    metrics: tuple[MetricSample, ...] = field(default=())

    def of_type(self, kind: type[Action]) -> list[Any]:
        return [a for a in self.actions if isinstance(a, kind)]
