"""The view model of one set's rollout: what every face shows (the terminal tree, the dashboard, ``simulate --live``).

Plain frozen values with words in them, never colours: a face picks the colour from ``icon`` or ``state``, and the
text stays meaningful without one (``NO_COLOR``, a pipe, a screen reader).

The icon vocabulary is Argo Rollouts' (``kubectl argo rollouts get rollout``), so a reader who knows one knows the
other: ✔ done / available, ✖ failed, ⚠ a warning that needs a person, ◌ moving, ◷ waiting to start, ॥ held.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "ICON_BAD",
    "ICON_OK",
    "ICON_PAUSED",
    "ICON_PROGRESSING",
    "ICON_WAITING",
    "ICON_WARNING",
    "STATE_DEGRADED",
    "STATE_HEALTHY",
    "STATE_PAUSED",
    "STATE_PROGRESSING",
    "CanaryRow",
    "ConditionRow",
    "EventRow",
    "PodRow",
    "RevisionRow",
    "RolloutView",
]

ICON_OK = "✔"
ICON_BAD = "✖"
ICON_WARNING = "⚠"
ICON_PROGRESSING = "◌"
ICON_WAITING = "◷"
ICON_PAUSED = "॥"

STATE_HEALTHY = "Healthy"
"""The rollout is complete (held at the partition counts as complete)."""
STATE_PROGRESSING = "Progressing"
STATE_DEGRADED = "Degraded"
"""Failed: progress deadline exceeded, safety halt, an invalid spec. ``status`` exits 1."""
STATE_PAUSED = "Paused"
"""Nothing will move without a person: OnDelete pods at an old revision and no quorum-aware controller."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RevisionRow:
    """A revision the set's pods run: its name, tag (``current``, ``update`` or both) and images. The name is the
    ControllerRevision's in full (``web-7c9d5b``), as the controller's conditions, the set's status and the pods'
    ``controller-revision-hash`` label spell it: one spelling wherever a view is shown."""

    name: str
    tags: tuple[str, ...]
    images: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionRow:
    type: str
    status: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PodRow:
    """One ordinal. ``pod`` is None when the ordinal has no pod (being created, or deleted for an update)."""

    ordinal: int
    name: str
    exists: bool
    revision: str
    """The revision's name (``web-7c9d5b``), or "" for a missing pod."""
    tag: str
    """``update``, ``current``, ``old`` (neither) or ""."""
    role: str
    """``leader`` or ``follower`` from the member Lease, "" where no Lease says."""
    phase: str
    status: str
    """In a word: Running, Ready, Available, ImagePullBackOff, Terminating, Missing, ..."""
    icon: str
    ready: bool
    available: bool
    restarts: int
    age_seconds: float | None
    waited_on: bool
    """The rollout waits on this pod."""
    why: str
    """Why the rollout waits on it, or why it is not available, in words; "" when all is well."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CanaryRow:
    """A set with canary steps (projection/canary.py): where its rollout stands, in words."""

    step: str
    """``step 2/4 analysis web-7cf995dbdb-2 Running``, ``step 4/4 pause 30s, until 2026-11-28T09:42:12Z``..."""
    stable: str
    """The stable revision: what the set runs in full, what an abort goes back to."""
    abort: str
    """Why the rollout is aborted (``status.abortMessage``), or "" when it is not."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventRow:
    at: float | None
    type: str
    reason: str
    object: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RolloutView:
    """One set's rollout at one instant. ``now`` is the instant, in the clock of the world it came from."""

    kind: str
    """``sts`` (apps/v1) or ``rsts`` (apps.rollwise.dev)."""
    namespace: str
    name: str
    now: float
    strategy: str
    """The update strategy; ``OnDelete (QuorumAware)`` for a set the quorum-aware controller updates."""
    pod_management: str
    budget: str
    """maxUnavailable as written (``1`` when unset), or "" where the strategy has none."""
    partition: int
    desired: int
    current: int
    updated: int
    ready: int
    available: int
    current_revision: RevisionRow | None
    update_revision: RevisionRow | None
    conditions: tuple[ConditionRow, ...]
    state: str
    icon: str
    message: str
    """The rollout in one line: what it waits for, naming the pod, or that it is complete."""
    done: bool
    failed: bool
    waiting_on: str
    """The pod the rollout waits on, "" when none."""
    pods: tuple[PodRow, ...]
    events: tuple[EventRow, ...] = field(default=())
    canary: CanaryRow | None = None
    """Where a canary stands, for a set with ``rollingUpdate.steps``."""

    @property
    def title(self) -> str:
        return f"{self.kind}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the dashboard's wire form)."""
        return {**asdict(self), "title": self.title}
