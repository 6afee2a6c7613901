"""The strategy registry: the one table a new update strategy touches."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.controllers.statefulset.strategies.base import Strategy
from rollwise.controllers.statefulset.strategies.enforced import EnforcedRollingUpdate
from rollwise.controllers.statefulset.strategies.on_delete import OnDelete
from rollwise.controllers.statefulset.strategies.recreate import Recreate
from rollwise.controllers.statefulset.strategies.rolling import RollingUpdate

__all__ = ["Strategy", "effective_type", "strategy_for"]

_REGISTRY: dict[str, Strategy] = {
    "RollingUpdate": RollingUpdate(),
    "OnDelete": OnDelete(),
    "Recreate": Recreate(),
    "EnforcedRollingUpdate": EnforcedRollingUpdate(),
}


def effective_type(sts: Mapping[str, Any], gates: FeatureGates) -> str:
    """``spec.updateStrategy.type``, or RollingUpdate where the controller lacks the feature.

    KEP-3541 and seed 003 (version skew): a controller without the gate treats Recreate and EnforcedRollingUpdate
    as RollingUpdate; an unknown type does too.
    """
    kind = str((sts["spec"].get("updateStrategy") or {}).get("type") or "RollingUpdate")
    if (kind == "Recreate" and not gates.recreate) or (
        kind == "EnforcedRollingUpdate" and not gates.enforced_rolling_update
    ):
        return "RollingUpdate"
    return kind if kind in _REGISTRY else "RollingUpdate"


def strategy_for(update_type: str) -> Strategy:
    return _REGISTRY[update_type]
