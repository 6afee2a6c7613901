"""A violation's trace as a scenario file (spec/simulate.md) that ``rollwise simulate`` replays, and the check
that the replay shows the same violation.

What a person or a fault does becomes a step (patch, scale, deletePod, podFault); what pods do by themselves
becomes time: the kubelet's startSeconds, readySeconds, minReadySeconds and terminationSeconds between steps. The
simulator's controllers react at once and always on a consistent view, so a trace that needs a stale view, a
crash between two actions, or a pod transition the controller never saw is written but does not replay; the
scenario's description says so.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from rollwise.api.identity import ordinal_range
from rollwise.api.meta import Obj, name_of
from rollwise.api.strategies import KINDS
from rollwise.controllers.plan import CreatePod, Plan
from rollwise.controllers.view import SetView
from rollwise.explore.environment import ADDS_HOOK, RELEASES_HOOK, REMOVES_HOOK
from rollwise.explore.model import HOOK_LABEL, HOOK_VALUE, Bounds, Move, SetFacts, with_hook_label
from rollwise.explore.world import born_of
from rollwise.invariants import Birth, Decision, rules
from rollwise.scenario.scenario import Scenario, parse_scenario
from rollwise.sim.loop import Simulation

__all__ = ["replay_shows", "trace_to_scenario", "unreplayable"]

START_SECONDS, READY_SECONDS, TERMINATION_SECONDS = 5.0, 2.0, 3.0
_GAP_SECONDS = 0.001
_FAULT_STEPS = {"fault: crash": "crash", "fault: fail": "fail", "recovers": "recover"}


def unreplayable(trace: Sequence[Move]) -> list[str]:
    """Why the simulator cannot express this trace, in words (empty: it can)."""
    why = []
    kinds = {m.kind for m in trace}
    if "reconciles on a stale view" in kinds:
        why.append("a stale view (the simulator's controllers always read the current store)")
    if "crashes mid-plan" in kinds:
        why.append("a controller crash between two actions of a plan")
    if "creates a PodDisruptionBudget" in kinds:
        why.append("a PodDisruptionBudget created mid-run (a scenario lists it among its objects instead)")
    if "fault: pull-fault" in kinds:
        why.append("a pull failure of a good image (the simulator fails pulls per image only)")
    return why


def trace_to_scenario(manifest: Obj, facts: SetFacts, bounds: Bounds, trace: Sequence[Move], *,
                      invariant: str, message: str) -> dict[str, Any]:
    obj = copy.deepcopy(dict(with_hook_label(manifest, bounds)))
    obj["spec"] = {**obj["spec"], "replicas": bounds.replicas}
    containers = [dict(c) for c in obj["spec"]["template"]["spec"]["containers"]]
    steps: list[dict[str, Any]] = []
    image = containers[0].get("image")
    clock = _Clock()
    last_step = 0.0
    acted = True  # the controller's first reconcile (at t=0) comes before any step in the trace
    for move in trace:
        at = clock.advance(move, facts)
        step = _step(move, facts, containers)
        if step is None:
            if move.created or move.deleted:
                acted = True
            elif move.actor == "kubelet" and at > last_step:
                acted = False  # time passes after the controller's last act
            continue
        if acted:
            # At one instant the simulator runs steps before the controllers; the trace has a controller act
            # first, so the step comes a moment later.
            at = clock.now = max(at, last_step) + _GAP_SECONDS
        if at > last_step:
            steps.append({"after": round(at - last_step, 3)})
            last_step = at
        acted = False
        steps.append(step)
        if move.kind == "changes the template":
            image = step["patch"]["merge"]["spec"]["template"]["spec"]["containers"][0]["image"]
            containers[0]["image"] = image
    steps.append({"waitFor": {"rolloutComplete": facts.name, "timeout": 600}})
    notes = unreplayable(trace)
    description = f"found by rollwise explore: {invariant}: {message}"
    if notes:
        description += ". Not replayable in the simulator: it needs " + "; ".join(notes)
    scenario: dict[str, Any] = {
        "name": f"explore-{facts.name}-{invariant}",
        "description": description,
        "kubelet": {"startSeconds": START_SECONDS, "readySeconds": READY_SECONDS,
                    "terminationSeconds": TERMINATION_SECONDS,
                    # No quorum model: the explorer's members turn Ready on their own, as here (with the model, a
                    # member is Ready only once a quorum runs, which OrderedReady creation never reaches).
                    "images": {facts.broken_image: {"fail": "ImagePullBackOff"}}},
        "objects": [obj],
        "steps": steps,
        "limitSeconds": 3600,
    }
    if invariant == "liveness" and image != facts.broken_image:
        scenario["expect"] = {facts.name: {"completed": True}}
    return scenario


class _Clock:
    """When each move would happen in the simulator: a pod's transitions follow its creation (or deletion) by the
    kubelet's durations; controllers and steps act at the latest time reached so far."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pods: dict[str, float] = {}

    def advance(self, move: Move, facts: SetFacts) -> float:
        if move.actor == "kubelet":
            seconds = {"container starts": START_SECONDS, "image pull fails": START_SECONDS,
                       "readiness passes": READY_SECONDS, "minReadySeconds elapse": facts.min_ready_seconds + 1,
                       "termination finishes": TERMINATION_SECONDS}.get(move.kind)
            if seconds is not None:
                at = self.pods.get(move.target, self.now) + seconds
                self.pods[move.target] = at
                self.now = max(self.now, at)
                return self.now
        for name in (*move.created, *move.deleted):
            self.pods[name] = self.now
        if (move.actor == "user" and move.kind == "deletes pod") or move.kind.startswith("fault"):
            self.pods[move.target] = self.now
        return self.now


def _step(move: Move, facts: SetFacts, containers: list[dict[str, Any]]) -> dict[str, Any] | None:
    if move.actor == "user":
        if move.kind == "deletes pod":
            return {"deletePod": move.target}
        if move.kind == "scales":
            return {"scale": {"name": facts.name, "replicas": int(move.detail.split()[1])}}
        if move.kind == "changes the template":
            changed = [dict(c) for c in containers]
            changed[0]["image"] = move.detail.split()[1].rstrip(",")
            return {"patch": {"kind": "StatefulSet", "name": facts.name,
                              "merge": {"spec": {"template": {"spec": {"containers": changed}}}}}}
        if move.kind in (ADDS_HOOK, REMOVES_HOOK):
            hook = {"preDelete": {"labelsHandler": {HOOK_LABEL: HOOK_VALUE}}} if move.kind == ADDS_HOOK else None
            return {"patch": {"kind": "StatefulSet", "name": facts.name, "merge": {"spec": {"lifecycle": hook}}}}
        if move.kind in ("pauses", "resumes"):
            return {"patch": {"kind": "StatefulSet", "name": facts.name,
                              "merge": {"spec": {"paused": True if move.kind == "pauses" else None}}}}
        if move.kind == "reserves ordinals":
            return {"patch": {"kind": "StatefulSet", "name": facts.name,
                              "merge": {"spec": {"reserveOrdinals": json.loads(move.detail)}}}}
        if move.kind == "sets the partition":
            key = str(KINDS[facts.strategy].block)  # a partition move comes only for a rolling kind
            return {"patch": {"kind": "StatefulSet", "name": facts.name,
                              "merge": {"spec": {"updateStrategy": {key: {"partition": int(move.detail.split()[1])}}}}}}
    if move.kind == RELEASES_HOOK:
        return {"releaseHook": move.target}
    fault = _FAULT_STEPS.get(move.kind)
    if fault is not None and move.actor == "kubelet":
        return {"podFault": {"pod": move.target, "fault": fault}}
    return None


def replay_shows(scenario_doc: dict[str, Any], invariant: str, facts: SetFacts) -> bool:
    """Run the scenario in the simulator and say whether it shows the same violation: plan-level forms of the
    invariants watch every reconcile, and the event stream shows lost claims and unfinished rollouts."""
    scenario: Scenario = parse_scenario(copy.deepcopy(scenario_doc), default_name="explore")
    sim = Simulation(scenario)
    seen: list[str] = []
    born: dict[str, tuple[str, int, bool]] = {}

    def watch(view: SetView, plan: Plan) -> None:
        seen.extend(_plan_problems(view, plan, facts, born, quorum=False))

    def watch_quorum(view: SetView, plan: Plan) -> None:
        seen.extend(_plan_problems(view, plan, facts, born, quorum=True))

    sim.observers.append(watch)
    sim.quorum_observers.append(watch_quorum)
    result = sim.run()
    if invariant == "liveness":
        return not result["summary"].get(facts.name, {}).get("completed")
    if invariant == "claims":
        return _claim_lost(scenario_doc, result["events"])
    return invariant in seen


def _plan_problems(view: SetView, plan: Plan, facts: SetFacts, born: dict[str, Birth], *,
                   quorum: bool) -> list[str]:
    """budget and no-churn judged on one reconcile's view and plan (the simulator carries the plan out at once)."""
    found = []
    decision = Decision(view=view, actions=plan.actions, quorum=quorum, births=dict(born))
    if rules.quorum(decision) if quorum else rules.budget(decision):
        found.append("budget")
    found.extend("no-churn" for _ in rules.no_churn(decision))
    for create in plan.of_type(CreatePod):
        if (built := born_of(view.set, create.pod, facts.gates)) is not None:
            born[name_of(create.pod)] = built
    return found


def _claim_lost(doc: dict[str, Any], events: list[dict[str, Any]]) -> bool:
    spec = dict(doc["objects"][0]["spec"])
    for e in events:
        if e["type"] == "Step" and e.get("action") == "scale":
            step = doc["steps"][e["index"]]
            spec["replicas"] = int(step["scale"]["replicas"])
        elif e["type"] == "Step" and e.get("action") == "patch":
            spec.update({k: v for k, v in doc["steps"][e["index"]]["patch"]["merge"].get("spec", {}).items()
                         if k == "reserveOrdinals"})
        if e["type"] == "PVCDeleted" and int(str(e.get("claim", "x-0")).rsplit("-", 1)[1]) in ordinal_range(
                {"spec": spec}):
            return True
    return False


