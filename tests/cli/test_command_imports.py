"""A command imports only what it runs: ``--version`` imports no command, and an offline command never loads the
API server, aiohttp or lightkube (each costs a tenth of a second or more of every start)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rollwise.cli import COMMANDS

PROBE = """
import sys
from rollwise.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code or 0
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in ("rollwise", "aiohttp", "lightkube"))),
      file=sys.stderr)
sys.exit(code)
"""


def _imported(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stderr.splitlines()[-1].split())  # the probe's line comes last


def test_version_imports_no_command() -> None:
    modules = _imported("--version")
    assert not {module for module, _ in COMMANDS.values()} & modules
    assert not {m for m in modules if m.split(".")[0] in ("aiohttp", "lightkube")}


@pytest.mark.parametrize("argv", [["validate", "--help"], ["manifests", "crd"]])
def test_an_offline_command_loads_no_server_and_no_http_client(argv: list[str]) -> None:
    modules = _imported(*argv)
    assert not {m for m in modules if m.split(".")[0] in ("aiohttp", "lightkube")
                or m.startswith("rollwise.apiserver")}, sorted(modules)
