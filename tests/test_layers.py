"""The layering contracts in pyproject.toml hold (import-linter checks them: layers point down, and each driver
uses the runtime and never another driver), and no module grows past 400 lines."""

import shutil
import subprocess
import sys
from pathlib import Path

import grimp


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


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """One shortest cycle through each import that has a way back, deduplicated by the modules it passes."""
    found: dict[frozenset[str], list[str]] = {}
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                found.setdefault(frozenset(back), [module, *back])
    return sorted(found.values())


def test_no_module_imports_one_that_imports_it_back() -> None:
    """No circle of imports, direct or through others (issue 39): a circle makes its modules one unit that can
    only be read, tested and moved together, and is what lazy imports inside functions used to hide.

    Imports under ``TYPE_CHECKING`` count: a module that needs another's types to be checked depends on it as
    much as one that needs it to run (mypy reads both, and a move of either breaks the other); a Protocol saying
    what the importer needs breaks such a circle (``cluster/store/memory_deletion.GcStore``). Imports inside functions
    count too: grimp sees them, and hiding a circle that way is what this test forbids."""
    graph = grimp.build_graph("rollwise", exclude_type_checking_imports=False)
    cycles = _cycles(graph)
    assert not cycles, "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_a_strategy_name_is_typed_in_at_most_three_modules() -> None:
    """The strategy table (api/strategies.py) names each type and block once; everything else reads it (issue 39).
    EnforcedRollingUpdate stands for the rest: it is rollwise's own, so no other kind's strategy shares its name."""
    src = Path(__file__).resolve().parents[1] / "src"
    typed = sorted(str(p.relative_to(src)) for p in src.rglob("*.py")
                   if '"EnforcedRollingUpdate"' in (text := p.read_text()) or '"enforcedRollingUpdate"' in text)
    assert len(typed) <= 3, typed
