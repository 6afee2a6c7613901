"""The limits a rollout keeps, resolved once from the set and the gates: the strategy block in effect, the
availability budget (maxUnavailable) and the partition. ``Sync`` reads them for every reconcile; the invariants
(``rollwise.invariants``) read them to judge what a controller did, so both resolve them by the same rule."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.api.intstr import resolve_max_unavailable
from rollwise.api.steps import recorded_floor
from rollwise.api.strategies import ROLLING_KINDS, effective_type, partition_floor, strategy_block

__all__ = ["Limits", "limits_of"]


@dataclass(frozen=True, slots=True)
class Limits:
    update_type: str
    """The strategy in effect (``effective_type``): the spec's, or RollingUpdate where the gate is off."""
    block: dict[str, Any] | None
    """The parameter block the effective type reads (``api/strategies.strategy_block``; None if absent)."""
    budget: int
    """The resolved maxUnavailable (reference §2, KEP-961): 1 when the gate is off or the strategy has no block."""
    partition: int
    """The partition as an index (``api/strategies.partition_floor``, 0 without one): ordinals below start + partition
    keep the current revision. With canary steps, the partition of the step the status records
    (``api/steps.recorded_floor``), which the controller may move on within a reconcile (controllers/statefulset/
    steps.py)."""


def limits_of(sts: Mapping[str, Any], gates: FeatureGates, update_type: str | None = None) -> Limits:
    """The set's limits under ``gates``; ``update_type`` when the caller has resolved it already."""
    if update_type is None:
        update_type = effective_type(sts, gates)
    strategy = sts["spec"].get("updateStrategy") or {}
    block = strategy_block(strategy, update_type)
    budget = 1 if block is None or not gates.max_unavailable else resolve_max_unavailable(
        block.get("maxUnavailable"), int(sts["spec"].get("replicas", 1)))
    partition = partition_floor(strategy, update_type)
    if update_type in ROLLING_KINDS:
        partition = recorded_floor(sts, block, partition)  # canary steps: the recorded step's partition
    return Limits(update_type=update_type, block=block, budget=budget, partition=partition)
