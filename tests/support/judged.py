"""Every reconcile of a simulation judged by the invariants (``rollwise.invariants``), as the explorer judges states."""

from __future__ import annotations

from rollwise import invariants
from rollwise.sim import Simulation


def judge_every_decision(sim: Simulation) -> list[str]:
    """Attach an observer to ``sim``; the list returned fills with every invariant finding as the run goes."""
    problems: list[str] = []
    sim.observers.append(lambda view, plan: problems.extend(
        invariants.judge(invariants.Decision(view=view, actions=plan.actions))))
    return problems
