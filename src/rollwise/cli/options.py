"""Options several commands share: loading a scenario with ``--feature-gates`` and ``--strategy`` applied."""

from __future__ import annotations

from rollwise.api.errors import InvalidObject
from rollwise.api.features import parse_gate_flags
from rollwise.drivers.sim import Scenario, load_scenario
from rollwise.drivers.sim.strategy_override import parse_strategy

__all__ = ["load_with_overrides"]


def load_with_overrides(path: str, *, feature_gates: str = "", strategy: str | None = None) -> Scenario:
    """The scenario at ``path`` with gate and strategy overrides applied and every manifest re-checked against
    them. Raises InvalidObject naming the file, the field (or flag) and the rule."""
    scenario = load_scenario(path)
    if feature_gates:
        gates, errors = parse_gate_flags(feature_gates)
        if errors:
            raise InvalidObject(errors, source=path)
        scenario = scenario.with_gates(gates)
    if strategy:
        override, errors = parse_strategy(strategy)
        if override is None:
            raise InvalidObject(errors, source=path)
        scenario = scenario.with_strategy(override)
    return scenario.checked()
