"""``rollwise explore FILE``: every reachable state of the set(s) in a scenario or manifest, for small sizes.

Exit status: 0 no violation; 1 at least one (so it gates a pipeline as ``expect:`` does); 2 invalid input (the
file or a flag: field path and rule on stderr, nothing on stdout).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rollwise.api.errors import FieldError, InvalidObject
from rollwise.cli.options import load_with_overrides
from rollwise.cli.render import print_invalid
from rollwise.cluster.documents import read_documents
from rollwise.explore import PERTURBATIONS, SAFETY_ACTIONS, Bounds
from rollwise.explore.model import perturbations_of
from rollwise.explore.report import explore_scenario, render_lines, to_document
from rollwise.scenario.scenario import Scenario, parse_scenario
from rollwise.scenario.strategy_override import parse_strategy

__all__ = ["add_explore"]


def add_explore(sub: Any) -> None:
    p = sub.add_parser(
        "explore", help="check every reachable state of a StatefulSet for small sizes against the invariants",
        description="Explore every reachable state of the StatefulSet(s) in FILE (a scenario or a manifest): pods "
                    "start, become ready and available, crash, fail to pull, recover, are deleted and finish "
                    "terminating; a user changes the template (good or broken image), scales by one and moves the "
                    "partition; the controllers act on their Plans. Checks the budget, partition, Recreate, "
                    "one-pod-per-ordinal, claims, no-churn, quiescence and status invariants on every state and "
                    "move, and liveness (every healthy path completes the rollout). Exit 0: none violated; 1: a "
                    "violation (its shortest trace is printed and, with --out, written as a scenario); 2: invalid "
                    "input.")
    p.add_argument("file", help="scenario file or StatefulSet manifest (YAML or JSON)")
    p.add_argument("--replicas", type=int, default=3, metavar="N",
                   help="size of the set (scaling moves between N-1 and N; default 3)")
    p.add_argument("--template-changes", type=int, default=1, metavar="N", help="template changes per path (1)")
    p.add_argument("--faults", type=int, default=1, metavar="N", help="pod faults per path: crash, fail, pull (1)")
    p.add_argument("--user-actions", type=int, default=1, metavar="N",
                   help="user actions per path: delete a pod, scale, set the partition (1)")
    p.add_argument("--perturb", default="", metavar="LIST",
                   help="perturbations of the controllers' view, comma-separated: stale or stale:K (a reconcile on a "
                        "view up to K moves old, informer lag; stale is stale:1), crash (between two actions of a "
                        "plan), burst (transitions the controller never sees in between), roles (a role-probed set's "
                        "quorum-aware reconcile on a faulty role source: no answer, stale, two leaders)")
    p.add_argument("--no-read-your-writes", dest="read_your_writes", action="store_false",
                   help="turn off the runtime's read-your-writes check (KEP-5647), so a stale reconcile may decide "
                        "on a view that misses the controller's own last writes")
    p.add_argument("--safety-actions", default="", metavar="LIST",
                   help="further user actions, comma-separated: pause (toggle spec.paused), pdb (create a "
                        "PodDisruptionBudget of maxUnavailable 1 over the set's pods), reserve (reserve the second "
                        "wanted ordinal, or clear spec.reserveOrdinals), hook (add or remove a pre-delete hook on a "
                        "label every pod carries; the application releasing a marked pod's hook is a move of its "
                        "own); each spends a user action")
    p.add_argument("--strategy", metavar="TYPE",
                   help="override every StatefulSet's update strategy: RollingUpdate[:maxUnavailable=N,partition=N], "
                        "OnDelete, Recreate, EnforcedRollingUpdate, QuorumAware")
    p.add_argument("--max-states", type=int, default=200_000, metavar="N",
                   help="stop after N states (the summary then says the search was not exhaustive)")
    p.add_argument("--out", metavar="DIR", help="write each violation's replay scenario under DIR")
    p.add_argument("--json", action="store_true", help="print the result document as JSON (nothing else on stdout)")
    p.set_defaults(run=run_explore)


def _bounds(args: argparse.Namespace) -> tuple[Bounds | None, list[FieldError]]:
    errors = []
    for flag in ("replicas", "template_changes", "faults", "user_actions", "max_states"):
        value = getattr(args, flag)
        least = 1 if flag in ("replicas", "max_states") else 0
        if value < least:
            errors.append(FieldError(path="--" + flag.replace("_", "-"), value=value,
                                     rule=f"must be greater than or equal to {least}"))
    switches: frozenset[str] = frozenset()
    depth = 1
    for item in (s.strip() for s in args.perturb.split(",") if s.strip()):
        try:
            more, item_depth = perturbations_of([item])
        except ValueError as err:
            known = item.partition(":")[0] in PERTURBATIONS
            errors.append(FieldError(path="--perturb", kind="Invalid value" if known else "Unsupported value",
                                     value=item, rule=str(err).partition(": ")[2]))
            continue
        switches |= more
        depth = max(depth, item_depth)
    actions = [s.strip() for s in args.safety_actions.split(",") if s.strip()]
    errors += [FieldError(path="--safety-actions", kind="Unsupported value", value=s,
                          rule="supported values: " + ", ".join(SAFETY_ACTIONS)) for s in actions
               if s not in SAFETY_ACTIONS]
    if errors:
        return None, errors
    return Bounds(replicas=args.replicas, template_changes=args.template_changes, faults=args.faults,
                  user_actions=args.user_actions, perturbations=switches, stale_depth=depth,
                  read_your_writes=args.read_your_writes, max_states=args.max_states,
                  safety_actions=frozenset(actions)), []


def load_input(path: str, *, strategy: str | None) -> Scenario:
    """A scenario file, or a manifest (one or more YAML documents) whose sets are the starting point."""
    docs = [d for d in read_documents(path) if d is not None]  # the one loader: limits, no aliases, strict keys
    if (len(docs) == 1 and isinstance(docs[0], dict) and "kind" not in docs[0]) or not docs:
        return load_with_overrides(path, strategy=strategy)
    objects = [item for d in docs for item in (d.get("items") or [] if _is_list(d) else [d])]
    scenario = parse_scenario({"name": Path(path).stem, "objects": objects}, source=path)
    if strategy:
        override, errors = parse_strategy(strategy)
        if override is None:
            raise InvalidObject(errors, source=path)
        scenario = scenario.with_strategy(override)
    return scenario.checked()


def _is_list(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list)


def run_explore(args: argparse.Namespace) -> int:
    bounds, errors = _bounds(args)
    try:
        if bounds is None:
            raise InvalidObject(errors, source=args.file)
        scenario = load_input(args.file, strategy=args.strategy)
        if not any(o.get("kind") == "StatefulSet" for o in scenario.objects):
            raise InvalidObject([FieldError(path="objects", value=None, kind="Required value",
                                            rule="no StatefulSet to explore")], source=args.file)
    except InvalidObject as err:
        print_invalid(err)
        return 2
    outcomes = _run(scenario, bounds, args)
    if args.json:
        json.dump(to_document(outcomes, bounds), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for line in render_lines(outcomes, bounds):
            print(line)
    return 1 if any(o.exploration.violations for o in outcomes) else 0


def _run(scenario: Scenario, bounds: Bounds, args: argparse.Namespace) -> list[Any]:
    if args.json or not sys.stderr.isatty():
        return explore_scenario(scenario, bounds, out=args.out)
    from rich.console import Console  # noqa: PLC0415 - only on a terminal
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("exploring", total=None)
        return explore_scenario(scenario, bounds, out=args.out,
                                progress=lambda name, n: bar.update(task, description=f"{name}: {n} states"))
