"""The rollout view: one projection from a set's objects to what ``get``, ``status``, the dashboard and
``simulate --live`` show (pure; no I/O, no clock)."""

from rollwise.projection.model import (
    CanaryRow,
    ConditionRow,
    EventRow,
    PodRow,
    RevisionRow,
    RolloutView,
)
from rollwise.projection.project import project

__all__ = ["CanaryRow", "ConditionRow", "EventRow", "PodRow", "RevisionRow", "RolloutView", "project"]
