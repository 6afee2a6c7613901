"""The simulator: scenarios in virtual time on the memory store with the simulated kubelet."""

from __future__ import annotations

from typing import Any

from rollwise.scenario.scenario import Scenario, load_scenario, parse_scenario
from rollwise.sim.loop import Simulation

__all__ = ["Scenario", "Simulation", "load_scenario", "parse_scenario", "run_scenario"]


def run_scenario(scenario: Scenario) -> dict[str, Any]:
    """Run the scenario to its end and return the result document (spec/simulate.md)."""
    return Simulation(scenario).run()
