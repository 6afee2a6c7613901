"""Explore every StatefulSet of a scenario, write each violation's replay scenario, and describe the outcome:
a document (``--json``) and plain lines a person reads at a glance."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rollwise.api.meta import Obj, name_of
from rollwise.explore.controller import Decide
from rollwise.explore.model import Bounds
from rollwise.explore.replay import replay_shows, trace_to_scenario, unreplayable
from rollwise.explore.search import Exploration, Violation, explore
from rollwise.explore.world import initial_node
from rollwise.scenario.scenario import Scenario

__all__ = ["SetOutcome", "explore_scenario", "render_lines", "to_document"]


@dataclass(slots=True, kw_only=True)
class SetOutcome:
    exploration: Exploration
    manifest: Obj
    replays: dict[str, dict[str, Any]]
    """Invariant → the replay scenario document."""
    paths: dict[str, str]
    """Invariant → where the replay scenario was written (with ``out``)."""
    reproduced: dict[str, bool]
    """Invariant → whether ``rollwise simulate`` on the replay scenario shows the same violation."""


def explore_scenario(scenario: Scenario, bounds: Bounds, *, out: str | None = None, decide: Decide | None = None,
                     progress: Callable[[str, int], None] | None = None) -> list[SetOutcome]:
    """Explore each StatefulSet of the scenario from its manifest (steps are not used: the explorer makes its own)."""
    outcomes = []
    for manifest in scenario.objects:
        if manifest.get("kind") != "StatefulSet":
            continue
        start = initial_node(manifest, gates=scenario.gates, bounds=bounds)
        name = name_of(manifest)
        tick = functools.partial(progress, name) if progress is not None else None
        result = explore(start, bounds, decide=decide, progress=tick)
        replays, paths, reproduced = {}, {}, {}
        for v in result.violations:
            doc = trace_to_scenario(manifest, start.facts, bounds, (*v.trace, *v.cycle), invariant=v.invariant,
                                    message=v.message)
            replays[v.invariant] = doc
            trace = (*v.trace, *v.cycle)
            reproduced[v.invariant] = not unreplayable(trace) and replay_shows(doc, v.invariant, start.facts)
            if out is not None:
                target = Path(out) / f"{name}-{v.invariant}.yaml"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(yaml.safe_dump(doc, sort_keys=False))
                paths[v.invariant] = str(target)
        outcomes.append(SetOutcome(exploration=result, manifest=manifest, replays=replays, paths=paths,
                                   reproduced=reproduced))
    return outcomes


def _violation_doc(v: Violation, outcome: SetOutcome) -> dict[str, Any]:
    notes = unreplayable((*v.trace, *v.cycle))
    return {
        "invariant": v.invariant,
        "message": v.message,
        "trace": [m.words() for m in v.trace],
        "cycle": [m.words() for m in v.cycle],
        "replay": outcome.paths.get(v.invariant),
        "replayable": not notes,
        "notReplayableBecause": notes,
        "reproduced": outcome.reproduced.get(v.invariant, False),
    }


def to_document(outcomes: list[SetOutcome], bounds: Bounds) -> dict[str, Any]:
    return {
        "bounds": {"replicas": bounds.replicas, "templateChanges": bounds.template_changes, "faults": bounds.faults,
                   "userActions": bounds.user_actions, "perturbations": sorted(bounds.perturbations),
                   "staleDepth": bounds.stale_depth, "readYourWrites": bounds.read_your_writes,
                   "maxStates": bounds.max_states},
        "sets": [{
            "name": o.exploration.set_name,
            "strategy": o.exploration.strategy,
            "podManagementPolicy": o.exploration.policy,
            "states": o.exploration.states,
            "transitions": o.exploration.transitions,
            "invariantChecks": o.exploration.checks,
            "invariants": o.exploration.invariants,
            "exhaustive": o.exploration.complete,
            "seconds": round(o.exploration.seconds, 3),
            "violations": [_violation_doc(v, o) for v in o.exploration.violations],
        } for o in outcomes],
        "violations": sum(len(o.exploration.violations) for o in outcomes),
    }


def render_lines(outcomes: list[SetOutcome], bounds: Bounds) -> list[str]:
    perturb = ",".join(f"stale:{bounds.stale_depth}" if s == "stale" and bounds.stale_depth > 1 else s
                       for s in sorted(bounds.perturbations)) or "none"
    if not bounds.read_your_writes:
        perturb += ", read-your-writes check off"
    lines = [f"bounds: {bounds.replicas} replicas, {bounds.template_changes} template change(s), "
             f"{bounds.faults} fault(s), {bounds.user_actions} user action(s), perturbations: {perturb}"]
    for o in outcomes:
        e = o.exploration
        verdict = "no violations" if not e.violations else f"{len(e.violations)} VIOLATION(S)"
        scope = "exhaustive within bounds" if e.complete else f"STOPPED at --max-states {bounds.max_states}"
        lines.append(f"{e.set_name} ({e.strategy}, {e.policy}): {e.states} states, {e.transitions} transitions, "
                     f"{e.checks} invariant checks ({len(e.invariants)} invariants), {scope}: {verdict}")
        for v in e.violations:
            lines.append(f"  {v.invariant}: {v.message}")
            lines.append(f"    shortest trace ({len(v.trace)} moves):")
            lines += [f"      {i + 1}. {m.words()}" for i, m in enumerate(v.trace)]
            if v.cycle:
                label = "then, round and round:" if "cycle" in v.message else "then, with healthy moves only:"
                lines.append(f"    {label}")
                lines += [f"      - {m.words()}" for m in v.cycle]
            notes = unreplayable((*v.trace, *v.cycle))
            where = o.paths.get(v.invariant)
            if notes:
                lines.append(f"    not replayable in the simulator: it needs {'; '.join(notes)}")
            elif not o.reproduced.get(v.invariant):
                lines.append("    the replay scenario does not reach the violation in the simulator (its timing "
                             "differs from the trace's)")
            if where:
                lines.append(f"    replay: rollwise simulate {where}")
    return lines
