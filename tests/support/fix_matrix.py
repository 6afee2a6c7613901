"""The recovering strategies of issue 23 and a broken-template-then-fix story for each, shared by the simulator
sweep and the runs on ``rollwise up`` and through the operator.

A recovering strategy is one whose point is that a fix lands: RollingUpdate with ``podProgressTimeoutSeconds``
(budget 1 and 2), EnforcedRollingUpdate and Recreate (KEP-3541, seeds 000 and 003).
"""

from __future__ import annotations

from typing import Any

__all__ = ["FAULTS", "POLICIES", "RECOVERING", "strategy_block"]

RECOVERING: dict[str, dict[str, Any]] = {
    "RollingUpdate+timeout/budget1": {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxUnavailable": 1, "podProgressTimeoutSeconds": 20}},
    "RollingUpdate+timeout/budget2": {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxUnavailable": 2, "podProgressTimeoutSeconds": 20}},
    "EnforcedRollingUpdate": {"type": "EnforcedRollingUpdate"},
    "Recreate": {"type": "Recreate"},
}
POLICIES = ("OrderedReady", "Parallel")
FAULTS = ("ImagePullBackOff", "CrashLoopBackOff")


def strategy_block(name: str) -> dict[str, Any]:
    return RECOVERING[name]
