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
from collections.abc import Sequence
from typing import Any

from rollwise.api.meta import Obj
from rollwise.drivers.explore.model import Bounds, Move, SetFacts
from rollwise.drivers.sim.loop import Simulation
from rollwise.drivers.sim.scenario import Scenario, parse_scenario

__all__ = ["replay_shows", "trace_to_scenario", "unreplayable"]

START_SECONDS, READY_SECONDS, TERMINATION_SECONDS = 5.0, 2.0, 3.0
_FAULT_STEPS = {"fault: crash": "crash", "fault: fail": "fail", "recovers": "recover"}


def unreplayable(trace: Sequence[Move]) -> list[str]:
    """Why the simulator cannot express this trace, in words (empty: it can)."""
    why = []
    kinds = {m.kind for m in trace}
    if "reconciles on a stale view" in kinds:
        why.append("a stale view (the simulator's controllers always read the current store)")
    if "crashes mid-plan" in kinds:
        why.append("a controller crash between two actions of a plan")
    if "fault: pull-fault" in kinds:
        why.append("a pull failure of a good image (the simulator fails pulls per image only)")
    return why


def trace_to_scenario(manifest: Obj, facts: SetFacts, bounds: Bounds, trace: Sequence[Move], *,
                      invariant: str, message: str) -> dict[str, Any]:
    obj = copy.deepcopy(dict(manifest))
    obj["spec"] = {**obj["spec"], "replicas": bounds.replicas}
    containers = [dict(c) for c in obj["spec"]["template"]["spec"]["containers"]]
    steps: list[dict[str, Any]] = []
    pending: dict[str, float] = {}  # seconds of pod progress since the last step, per pod
    image = containers[0].get("image")
    for move in trace:
        seconds = _progress_seconds(move, facts)
        if seconds:
            pending[move.target] = pending.get(move.target, 0.0) + seconds
            continue
        step = _step(move, facts, containers)
        if step is None:
            continue
        wait = max(pending.values(), default=0.0)
        if wait:
            steps.append({"after": wait})
        pending = {}
        steps.append(step)
        if "patch" in step and move.kind == "changes the template":
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
                    "images": {facts.broken_image: {"fail": "ImagePullBackOff"}}},
        "objects": [obj],
        "steps": steps,
        "limitSeconds": 3600,
    }
    if invariant == "liveness" and image != facts.broken_image:
        scenario["expect"] = {facts.name: {"completed": True}}
    return scenario


def _progress_seconds(move: Move, facts: SetFacts) -> float:
    return {"container starts": START_SECONDS, "readiness passes": READY_SECONDS,
            "minReadySeconds elapse": facts.min_ready_seconds + 1, "termination finishes": TERMINATION_SECONDS,
            "image pull fails": START_SECONDS}.get(move.kind, 0.0) if move.actor == "kubelet" else 0.0


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
        if move.kind == "sets the partition":
            key = "rollingUpdate" if facts.strategy == "RollingUpdate" else "enforcedRollingUpdate"
            return {"patch": {"kind": "StatefulSet", "name": facts.name,
                              "merge": {"spec": {"updateStrategy": {key: {"partition": int(move.detail.split()[1])}}}}}}
    fault = _FAULT_STEPS.get(move.kind)
    if fault is not None and move.actor == "kubelet":
        return {"podFault": {"pod": move.target, "fault": fault}}
    return None


def replay_shows(scenario_doc: dict[str, Any], invariant: str, *, budget: int | None = None) -> bool:
    """Run the scenario in the simulator and say whether its events show the same kind of violation."""
    scenario: Scenario = parse_scenario(copy.deepcopy(scenario_doc), default_name="explore")
    result = Simulation(scenario).run()
    name = next(iter(result["summary"]), "")
    figures = result["summary"].get(name, {})
    events = result["events"]
    if invariant == "liveness":
        return not figures.get("completed")
    if invariant == "claims":
        return _claim_lost(scenario_doc, events)
    if invariant == "budget":
        return budget is not None and int(figures.get("maxUnavailableObserved") or 0) > budget
    if invariant == "no-churn":
        return _churned(events)
    return False


def _claim_lost(doc: dict[str, Any], events: list[dict[str, Any]]) -> bool:
    replicas = int(doc["objects"][0]["spec"]["replicas"])
    for e in events:
        if e["type"] == "Step" and e.get("action") == "scale":
            step = doc["steps"][e["index"]]
            replicas = int(step["scale"]["replicas"])
        if e["type"] == "PVCDeleted" and int(str(e.get("claim", "x-0")).rsplit("-", 1)[1]) < replicas:
            return True
    return False


def _churned(events: list[dict[str, Any]]) -> bool:
    """A pod the controller created and then deleted with no template step in between and no failure seen."""
    created: dict[str, bool] = {}
    for e in events:
        if e["type"] == "Step" and e.get("action") == "patch":
            created.clear()
        elif e["type"] == "PodCreated":
            created[e["pod"]] = True
        elif e["type"] in ("PodFailed", "ContainerWaiting"):
            created.pop(e.get("pod", ""), None)
        elif e["type"] == "PodDeleteRequested" and e.get("by") != "user" and created.pop(e["pod"], False):
            return True
    return False
