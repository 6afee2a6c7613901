"""The one strategy table: each ``spec.updateStrategy.type``, the block of parameters it reads, whether it rolls
ordinal by ordinal (partition, maxUnavailable, canary steps), and the feature gate a controller needs to run it.

Pure data and the rules read off it, below the controllers: defaults, validation, scenario overrides, projection,
the explorer and the controllers (``controllers/statefulset/strategies`` maps each name to its behaviour) read the
names from here rather than typing them. Upstream: ``pkg/apis/apps/types.go`` (``StatefulSetUpdateStrategyType``),
KEP-3541 (Recreate; EnforcedRollingUpdate in its earlier draft), KEP-961 (maxUnavailable), seed 003 (version skew).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.features import ENFORCED_ROLLING_UPDATE as ENFORCED_GATE
from rollwise.api.features import RECREATE as RECREATE_GATE
from rollwise.api.features import FeatureGates
from rollwise.api.meta import annotations_of

__all__ = [
    "BLOCK_KEYS",
    "BLOCK_OWNERS",
    "ENFORCED_BLOCK",
    "ENFORCED_ROLLING_UPDATE",
    "KINDS",
    "NAMES",
    "ON_DELETE",
    "QUORUM_AWARE_POLICY",
    "RECREATE",
    "ROLLING_BLOCK",
    "ROLLING_KINDS",
    "ROLLING_UPDATE",
    "UPDATE_POLICY",
    "StrategyKind",
    "declared_type",
    "effective_type",
    "handed_to_quorum",
    "partition_floor",
    "strategy_block",
]

ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"
RECREATE = "Recreate"
ENFORCED_ROLLING_UPDATE = "EnforcedRollingUpdate"

ROLLING_BLOCK = "rollingUpdate"
ENFORCED_BLOCK = "enforcedRollingUpdate"

UPDATE_POLICY = "rollwise.dev/update-policy"
QUORUM_AWARE_POLICY = "QuorumAware"
"""seed 001 (DEP-07) hands a set to the quorum-aware controller through ``type: OnDelete``; rollwise adds this
annotation so that a plain OnDelete set stays under manual control (controllers/quorum)."""


@dataclass(frozen=True, slots=True)
class StrategyKind:
    name: str
    block: str | None
    """The key of the parameter block this type reads (None: it takes no parameters)."""
    rolling: bool
    """Rolls ordinal by ordinal: reads a partition, a maxUnavailable budget and canary steps."""
    gate: str | None
    """The feature gate a controller needs to run it; without it, the set runs as RollingUpdate (seed 003)."""


KINDS: Mapping[str, StrategyKind] = {
    kind.name: kind
    for kind in (
        StrategyKind(ROLLING_UPDATE, ROLLING_BLOCK, rolling=True, gate=None),
        StrategyKind(ON_DELETE, None, rolling=False, gate=None),
        StrategyKind(RECREATE, None, rolling=False, gate=RECREATE_GATE),
        StrategyKind(ENFORCED_ROLLING_UPDATE, ENFORCED_BLOCK, rolling=True, gate=ENFORCED_GATE),
    )
}
NAMES = tuple(KINDS)
"""Every type, in the order errors and docs list them."""
ROLLING_KINDS = frozenset(name for name, kind in KINDS.items() if kind.rolling)
BLOCK_OWNERS = tuple((kind.block, kind.name) for kind in KINDS.values() if kind.block is not None)
"""Each parameter block and the one type it is allowed with (seed 003: enforcedRollingUpdate reuses the
rollingUpdate shape)."""
BLOCK_KEYS = tuple(block for block, _ in BLOCK_OWNERS)


def handed_to_quorum(sts: Mapping[str, Any]) -> bool:
    """Is this set quorum-aware: ``updateStrategy.type: OnDelete`` and the annotation
    ``rollwise.dev/update-policy: QuorumAware``, on either StatefulSet kind. The one rule: validation, the
    controllers, ``get``, ``rollout status`` and the explorer all ask it here. False for any malformed shape (it
    is asked before validation has said what is wrong)."""
    spec = sts.get("spec")
    strategy = spec.get("updateStrategy") if isinstance(spec, Mapping) else None
    if not isinstance(strategy, Mapping) or strategy.get("type") != ON_DELETE:
        return False
    notes = annotations_of(sts) if isinstance(sts.get("metadata"), Mapping) else {}
    return isinstance(notes, Mapping) and notes.get(UPDATE_POLICY) == QUORUM_AWARE_POLICY


def declared_type(strategy: Mapping[str, Any]) -> str:
    """The type a ``spec.updateStrategy`` names: RollingUpdate when it names none (the API default)."""
    return str(strategy.get("type") or ROLLING_UPDATE)


def effective_type(sts: Mapping[str, Any], gates: FeatureGates) -> str:
    """``spec.updateStrategy.type``, or RollingUpdate where the controller lacks the feature.

    KEP-3541 and seed 003 (version skew): a controller without the gate treats Recreate and EnforcedRollingUpdate
    as RollingUpdate; an unknown type does too.
    """
    kind = KINDS.get(declared_type(sts["spec"].get("updateStrategy") or {}))
    if kind is None or (kind.gate is not None and not gates.on(kind.gate)):
        return ROLLING_UPDATE
    return kind.name


def strategy_block(strategy: Mapping[str, Any], update_type: str | None = None) -> dict[str, Any] | None:
    """The parameter block the strategy in effect reads (None if it has none or the set gives none).

    ``update_type`` is the type in effect (``effective_type``), the declared one when not given. A
    controller without the EnforcedRollingUpdate gate runs such a set as RollingUpdate and reads its
    ``enforcedRollingUpdate`` block (seed 003, version skew)."""
    declared = declared_type(strategy)
    kind = update_type or declared
    block: Any = None
    if kind == ENFORCED_ROLLING_UPDATE and declared == ENFORCED_ROLLING_UPDATE:
        block = strategy.get(ENFORCED_BLOCK)
    elif kind == ROLLING_UPDATE:
        block = strategy.get(ROLLING_BLOCK) or strategy.get(ENFORCED_BLOCK)
    return block if isinstance(block, dict) else None


def partition_floor(strategy: Mapping[str, Any], update_type: str | None = None) -> int:
    """The partition as an index into the ordinal range: the lowest ordinal the update touches (0 without one)."""
    block = strategy_block(strategy, update_type)
    value = block.get("partition") if block is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
