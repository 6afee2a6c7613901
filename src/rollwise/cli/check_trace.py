"""``rollwise check-trace FILE``: a run's record replayed against the invariants (docs/check-trace.md).

Exit status: 0 nothing found; 1 a violation (the first, with the lines that show it, on stdout); 2 the file cannot
be read or a line is malformed (one line on stderr: the line number and what is wrong).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rollwise.invariants.trace_check import MalformedLine, check_trace, describe

__all__ = ["add_check_trace"]


def add_check_trace(sub: Any) -> None:
    p = sub.add_parser("check-trace", help="check a run's decision log (--trace) or audit log against the invariants",
                       description="Replay a decision log (rollwise simulate/up/run --trace FILE) or an audit log "
                                   "(rollwise up --audit-log FILE) against rollwise's invariants: exit 0 clean, 1 "
                                   "with the first violation and the lines that show it, 2 on a malformed file.")
    p.add_argument("file", metavar="FILE", help="a decision log or an audit log (JSON lines)")
    p.set_defaults(run=run_check_trace)


def run_check_trace(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        text = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        print(f"error: {path}: {getattr(err, 'strerror', None) or err}", file=sys.stderr)
        return 2
    try:
        kind, count, violation = check_trace(text)
    except MalformedLine as err:
        print(f"error: {path}:{err.line}: {err.detail}", file=sys.stderr)
        return 2
    if violation is None:
        print(f"{path}: {count} {'writes' if kind == 'audit' else 'decisions'} checked, no violation")
        return 0
    print(f"{path}:{violation.line}: {violation.rule}: {violation.message}")
    for number in violation.shown_by:
        print(f"  line {number}: {describe(json.loads(text[number - 1]))}")
    return 1
