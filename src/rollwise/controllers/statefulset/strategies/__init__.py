"""The strategy registry: each type of the strategy table (``rollwise.api.strategies``) to its behaviour. A new
update strategy touches that table and this one."""

from __future__ import annotations

from rollwise.api.strategies import ENFORCED_ROLLING_UPDATE, ON_DELETE, RECREATE, ROLLING_UPDATE
from rollwise.controllers.statefulset.strategies.base import Strategy
from rollwise.controllers.statefulset.strategies.enforced import EnforcedRollingUpdate
from rollwise.controllers.statefulset.strategies.on_delete import OnDelete
from rollwise.controllers.statefulset.strategies.recreate import Recreate
from rollwise.controllers.statefulset.strategies.rolling import RollingUpdate

__all__ = ["Strategy", "strategy_for"]

_REGISTRY: dict[str, Strategy] = {
    ROLLING_UPDATE: RollingUpdate(),
    ON_DELETE: OnDelete(),
    RECREATE: Recreate(),
    ENFORCED_ROLLING_UPDATE: EnforcedRollingUpdate(),
}
"""Each name of the strategy table (``api/strategies.KINDS``, which also says which type is in effect under the
gates: ``effective_type``) to the behaviour the controller runs for it."""


def strategy_for(update_type: str) -> Strategy:
    return _REGISTRY[update_type]
