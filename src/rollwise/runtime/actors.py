"""The names the runtime's controllers write under: the audit log, the simulator's record and the wake rules (a
controller's own status write wakes nothing) read them. Named here only."""

from __future__ import annotations

__all__ = ["CONTROLLERS", "QUORUM_CONTROLLER", "STATEFULSET_CONTROLLER"]

STATEFULSET_CONTROLLER = "statefulset-controller"
QUORUM_CONTROLLER = "quorum-aware-controller"
CONTROLLERS = (STATEFULSET_CONTROLLER, QUORUM_CONTROLLER)
