"""The command line: ``rollwise simulate | validate | ...``. Parsing, exit codes and rendering; no decisions.

Exit codes (spec/simulate.md): 0 the command ran; 1 an ``expect`` assertion failed; 2 invalid input (a message on
stderr naming the file, the field path and the rule; nothing on stdout).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import metadata

from rollwise.cli.check_trace import add_check_trace
from rollwise.cli.compare import add_compare
from rollwise.cli.dashboard import add_dashboard
from rollwise.cli.demo import add_demo
from rollwise.cli.explore import add_explore
from rollwise.cli.extras import MissingExtra
from rollwise.cli.get import add_get, add_status
from rollwise.cli.lab import add_lab
from rollwise.cli.manifests import add_manifests
from rollwise.cli.migrate import add_migrate
from rollwise.cli.plan import add_plan
from rollwise.cli.rollout import add_rollout
from rollwise.cli.run import add_run
from rollwise.cli.simulate import add_simulate
from rollwise.cli.up import add_up
from rollwise.cli.validate import add_validate

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rollwise",
        description="StatefulSet rollouts in virtual time: upstream semantics plus the strategies the KEPs describe.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_simulate(sub)
    add_compare(sub)
    add_plan(sub)
    add_demo(sub)
    add_validate(sub)
    add_lab(sub)
    add_up(sub)
    add_manifests(sub)
    add_run(sub)
    add_rollout(sub)
    add_get(sub)
    add_status(sub)
    add_dashboard(sub)
    add_migrate(sub)
    add_explore(sub)
    add_check_trace(sub)
    return parser


def _version() -> str:
    try:
        return metadata.version("rollwise")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own parser says so (`run` in one line), as parse_args would have done
        getattr(args, "parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.run(args))
    except BrokenPipeError:  # `rollwise simulate ... | head` is fine
        return 0
    except MissingExtra as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
