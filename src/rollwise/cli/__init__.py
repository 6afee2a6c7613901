"""The command line: ``rollwise simulate | validate | ...``. Parsing, exit codes and rendering; no decisions.

Exit codes (spec/simulate.md): 0 the command ran; 1 an ``expect`` assertion failed; 2 invalid input (a message on
stderr naming the file, the field path and the rule; nothing on stdout).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from rollwise.cli.extras import MissingExtra

__all__ = ["main"]


COMMANDS: dict[str, tuple[str, str]] = {
    "simulate": ("rollwise.cli.simulate", "add_simulate"),
    "compare": ("rollwise.cli.compare", "add_compare"),
    "plan": ("rollwise.cli.plan", "add_plan"),
    "demo": ("rollwise.cli.demo", "add_demo"),
    "validate": ("rollwise.cli.validate", "add_validate"),
    "lab": ("rollwise.cli.lab", "add_lab"),
    "up": ("rollwise.cli.up", "add_up"),
    "manifests": ("rollwise.cli.manifests", "add_manifests"),
    "run": ("rollwise.cli.run", "add_run"),
    "rollout": ("rollwise.cli.rollout", "add_rollout"),
    "get": ("rollwise.cli.get", "add_get"),
    "status": ("rollwise.cli.get", "add_status"),
    "dashboard": ("rollwise.cli.dashboard", "add_dashboard"),
    "migrate": ("rollwise.cli.migrate", "add_migrate"),
    "explore": ("rollwise.cli.explore", "add_explore"),
    "check-trace": ("rollwise.cli.check_trace", "add_check_trace"),
}
"""Each command, in the order ``--help`` lists them, and where its parser and code live.

A command's module is imported only when that command runs (or for the full ``--help``): the server, the dashboard
and the CEL runtime cost start-up time that ``rollwise validate`` or ``kubectl rollwise status`` should not pay."""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rollwise",
        description="StatefulSet rollouts in virtual time: upstream semantics plus the strategies the KEPs describe.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    words = list(sys.argv[1:] if argv is None else argv)
    chosen = _command_in(words)
    if chosen is None and "--version" in words and not {"-h", "--help"} & set(words):
        return parser  # --version acts and exits before any command is needed: none is imported
    for name, (module, adder) in COMMANDS.items():
        if chosen is None or name == chosen:
            getattr(importlib.import_module(module), adder)(sub)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The command named by the first word that is not an option (the top-level options take no value)."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def _version() -> str:
    from importlib import metadata  # noqa: PLC0415 - 50 ms of start-up that only --version needs

    try:
        return metadata.version("rollwise")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (argparse's own action wants the string up front)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show program's version number and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"{parser.prog} {_version()}")  # on stdout, as argparse's version action prints
        parser.exit()


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
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
