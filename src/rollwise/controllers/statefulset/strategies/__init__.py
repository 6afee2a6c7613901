"""The strategy registry: the one table a new update strategy touches."""

from __future__ import annotations

from rollwise.api.features import FeatureGates
from rollwise.controllers.statefulset.strategies.base import Strategy
from rollwise.controllers.statefulset.strategies.on_delete import OnDelete
from rollwise.controllers.statefulset.strategies.rolling import RollingUpdate

__all__ = ["Strategy", "strategy_for"]

_REGISTRY: dict[str, Strategy] = {
    "RollingUpdate": RollingUpdate(),
    "OnDelete": OnDelete(),
}


def strategy_for(update_type: str, gates: FeatureGates) -> Strategy:
    """The strategy for ``updateStrategy.type``; an unknown or gated-off type falls back to RollingUpdate.

    KEP-3541 (skew): a controller without the feature treats the new types as RollingUpdate.
    """
    return _REGISTRY.get(update_type, _REGISTRY["RollingUpdate"])
