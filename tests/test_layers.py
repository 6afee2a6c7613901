"""The layering contract (cli -> drivers -> controllers | cluster | kubelet -> api) holds: import-linter checks it."""

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
