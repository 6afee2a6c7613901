"""The layering contracts in pyproject.toml hold (import-linter checks them: layers point down, and each driver
uses the runtime and never another driver), and no module grows past 400 lines."""

import shutil
import subprocess
import sys
from pathlib import Path


def test_imports_point_down_only() -> None:
    root = Path(__file__).resolve().parents[1]
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    proc = subprocess.run([exe, "--config", str(root / "pyproject.toml")], cwd=root, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


MAX_MODULE_LINES = 400
"""A module that grows past this is doing two things; split it by what each part is for."""


def test_no_module_in_src_is_over_400_lines() -> None:
    src = Path(__file__).resolve().parents[1] / "src"
    long = {str(p.relative_to(src)): n for p in src.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, long
