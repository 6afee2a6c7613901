"""The names the runtime's controllers write under: the audit log, the simulator's record and the wake rules (a
controller's own status write wakes nothing) read them. Named here only."""

from __future__ import annotations

__all__ = ["ANALYSIS_CONTROLLER", "CONTROLLERS", "QUORUM_CONTROLLER", "STATEFULSET_CONTROLLER"]

STATEFULSET_CONTROLLER = "statefulset-controller"
QUORUM_CONTROLLER = "quorum-aware-controller"
ANALYSIS_CONTROLLER = "analysis-controller"
"""The AnalysisRun controller (runtime/analysis.py): it writes runs, never sets, so it is not in ``CONTROLLERS``."""
CONTROLLERS = (STATEFULSET_CONTROLLER, QUORUM_CONTROLLER)
