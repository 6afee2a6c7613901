"""``rollwise plan FILE [--at SECONDS]``: what each controller would do next, and what it waits for — a dry run.

The scenario runs in virtual time up to ``--at`` (by default to its end); then every controller is asked once what
it would do, and nothing is executed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import InvalidObject
from rollwise.api.meta import name_of, namespace_of
from rollwise.api.numbers import MAX_SECONDS, check_number
from rollwise.cli.options import load_with_overrides
from rollwise.cli.render import figure, print_invalid
from rollwise.controllers.plan import (
    Action,
    CreateClaim,
    CreatePod,
    CreateRevision,
    DeletePod,
    DeleteRevision,
    EmitEvent,
    InPlaceUpdatePod,
    PatchOwner,
    PatchSet,
    Plan,
    UpdateClaim,
    UpdatePod,
    UpdateRevision,
    WriteStatus,
)
from rollwise.runtime.setkeys import all_sets
from rollwise.sim import Simulation

__all__ = ["add_plan", "describe_action", "preview"]


def add_plan(sub: Any) -> None:
    p = sub.add_parser("plan", help="show what the controllers would do next, without doing it",
                       description="Run the scenario up to --at seconds of virtual time, then show, for every "
                                   "StatefulSet, the actions each controller would take next and what it waits "
                                   "for. Nothing is executed.")
    p.add_argument("file", metavar="FILE", help="scenario file (YAML or JSON, UTF-8; see spec/simulate.md)")
    p.add_argument("--at", type=float, default=None, metavar="SECONDS",
                   help="virtual time to stop at (default: the end of the scenario)")
    p.add_argument("--strategy", metavar="TYPE", help="as for simulate")
    p.add_argument("--feature-gates", metavar="NAME=BOOL,...", default="", help="as for simulate")
    p.add_argument("--json", action="store_true", help="print the preview as JSON")
    p.set_defaults(run=run_plan)


def describe_action(action: Action) -> str:
    """One line for one action, with its reason."""
    if isinstance(action, CreatePod):
        what = f"create pod {name_of(action.pod)} at revision {action.revision}"
    elif isinstance(action, DeletePod):
        what = f"delete pod {action.name} (revision {action.revision})"
    elif isinstance(action, CreateClaim):
        what = f"create claim {name_of(action.claim)}"
    elif isinstance(action, UpdateClaim):
        what = f"update owner references of claim {name_of(action.claim)}"
    elif isinstance(action, UpdatePod):
        what = f"update pod {name_of(action.pod)} in place"
    elif isinstance(action, InPlaceUpdatePod):
        images = ", ".join(f"{c}={i}" for c, i in action.images)
        what = f"update the images of pod {name_of(action.pod)} in place ({images}; was revision {action.revision})"
    elif isinstance(action, PatchOwner):
        what = f"set owner references of {action.kind} {action.name}"
    elif isinstance(action, CreateRevision):
        what = f"create revision {name_of(action.revision)}"
    elif isinstance(action, UpdateRevision):
        what = f"reuse revision {name_of(action.revision)}"
    elif isinstance(action, DeleteRevision):
        what = f"delete revision {action.name}"
    elif isinstance(action, PatchSet):
        what = "annotate the StatefulSet"
    elif isinstance(action, WriteStatus):
        what = "write status"
    elif isinstance(action, EmitEvent):
        return f"event {action.event_reason}: {action.message}"
    else:  # pragma: no cover
        what = type(action).__name__
    return f"{what} — {action.reason}" if action.reason else what


def _entry(controller: str, plan: Plan) -> dict[str, Any]:
    return {
        "controller": controller,
        "actions": [describe_action(a) for a in plan.actions],
        "waiting": [str(b) for b in plan.blocked],
        "requeueAfter": plan.requeue_after,
    }


def preview(sim: Simulation) -> list[dict[str, Any]]:
    """For every set, both controllers' plans from the current state (nothing is executed)."""
    out = []
    for sts in all_sets(sim.cluster):
        entries = [_entry(controller, plan) for controller, plan in sim.controller.preview(sts)]
        out.append({"statefulSet": sim.recorder.label(namespace_of(sts), name_of(sts)), "at": sim.clock.now,
                    "controllers": entries})
    return out


def run_plan(args: argparse.Namespace) -> int:
    try:
        if args.at is not None:
            problems = check_number(args.at, "--at", minimum=0, maximum=MAX_SECONDS, what="a number of seconds")
            if problems:
                raise InvalidObject(problems, source="--at")
        scenario = load_with_overrides(args.file, strategy=args.strategy, feature_gates=args.feature_gates)
    except InvalidObject as err:
        print_invalid(err)
        return 2
    sim = Simulation(scenario)
    sim.run(until=args.at)
    result = preview(sim)
    if args.json:
        json.dump({"plans": result}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for item in result:
        print(f"StatefulSet {item['statefulSet']} at t={figure(item['at'])} s:")
        for entry in item["controllers"]:
            _print_entry(entry)
    return 0


def _print_entry(entry: Mapping[str, Any]) -> None:
    actions = [a for a in entry["actions"] if not a.startswith("write status") and not a.startswith("event ")]
    print(f"  {entry['controller']}:")
    if not actions and not entry["waiting"]:
        print("    nothing to do")
    for line in actions:
        print(f"    next: {line}")
    for line in entry["waiting"]:
        print(f"    {line}")
    if entry["requeueAfter"] is not None:
        print(f"    looks again in {figure(entry['requeueAfter'])} s")
