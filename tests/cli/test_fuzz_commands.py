"""Mutated bundled scenarios and manifests through every command that reads a file.

For every command: exit 0, 1 or 2, never an exception; exit 2 prints a field path on stderr and nothing on stdout;
each example within the hypothesis deadline; the process's peak memory stays bounded. A new command that reads a
file joins by adding one entry to ``COMMANDS``.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
import resource
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from bundled import LOADER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import REPLACEMENTS, get_at, paths_in, set_at
from tiers import examples

from rollwise.cli import main

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted([*(ROOT / "src" / "rollwise" / "examples").glob("*.yaml"),
                *(ROOT / "tests" / "scenarios").glob("*.yaml")])
SEED_DOCS = {p.name: yaml.load(p.read_text(), Loader=LOADER) for p in SEEDS}
# The manifests inside the scenarios, as a manifest file holds them: one object, or a kind: List of them.
SEED_DOCS |= {f"{name}:objects[0]": doc["objects"][0] for name, doc in list(SEED_DOCS.items()) if "objects" in doc}
SEED_DOCS |= {f"{name}:list": {"apiVersion": "v1", "kind": "List", "items": doc["objects"]}
              for name, doc in list(SEED_DOCS.items()) if "objects" in doc}

# command -> argv for a file (the file is appended); one entry per command that reads files.
COMMANDS: dict[str, Callable[[str], list[str]]] = {
    "simulate": lambda f: ["simulate", f, "--json"],
    "simulate-text": lambda f: ["simulate", f],
    "compare": lambda f: ["compare", f, "--strategies", "RollingUpdate,QuorumAware"],
    "plan": lambda f: ["plan", f, "--at", "30"],
    "validate": lambda f: ["validate", f],
    "explore": lambda f: ["explore", f, "--replicas", "2", "--faults", "0", "--user-actions", "0",
                          "--max-states", "200"],
}
# A problem line: two spaces, a field path (no spaces), a colon.
PROBLEM_LINE = re.compile(r"^  \S+: ", re.MULTILINE)
PEAK_RSS_KIB = 2_000_000

def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def tree_mutations(draw: st.DrawFn) -> Any:
    """A seed document with a few of its values swapped, deleted, deepened or replaced by odd numbers."""
    doc = json.loads(json.dumps(SEED_DOCS[draw(st.sampled_from(sorted(SEED_DOCS)))]))
    for _ in range(draw(st.integers(0, 3))):
        paths = paths_in(doc)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["similar", "similar", "replace", "delete", "deep", "unknown"]))
        current = get_at(doc, path)
        if action == "similar":
            # a plausible value of the same kind, so runs (exit 0 and 1) are exercised too, not only refusals
            if isinstance(current, int | float) and not isinstance(current, bool):
                doc = set_at(doc, path, draw(st.integers(0, 12) if isinstance(current, int) else st.floats(0, 120)))
        elif action == "delete" and path:
            doc = set_at(doc, path, None, delete=True)
        elif action == "deep":
            doc = set_at(doc, path, _nested(draw(st.integers(10, 80))))
        elif action == "unknown" and isinstance(current, dict):
            current["unknownField"] = copy.deepcopy(draw(REPLACEMENTS))
        else:  # a fresh copy: the sampled values are shared between examples
            doc = set_at(doc, path, copy.deepcopy(draw(REPLACEMENTS)))
    return doc


NON_FINITE = ["limitSeconds: .nan", "limitSeconds: .inf", "limitSeconds: -.inf", "limitSeconds: 1.0e+999"]


@st.composite
def file_bytes(draw: st.DrawFn) -> tuple[str, bytes]:
    """A file name and its bytes: a mutated document in YAML or JSON, then maybe a text- or byte-level mutation."""
    doc = draw(tree_mutations())
    as_json = draw(st.booleans())
    text = json.dumps(doc) if as_json else yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    mutation = draw(st.sampled_from(["none", "none", "none", "none", "duplicate", "alias", "non-finite", "truncate",
                                     "bom", "utf16", "latin1", "empty"]))
    if mutation == "duplicate" and not as_json and "\n" in text:
        lines = text.splitlines(keepends=True)
        i = draw(st.integers(0, len(lines) - 1))
        text = "".join([*lines[: i + 1], lines[i], *lines[i + 1:]])
    elif mutation == "alias" and not as_json:
        text = "x-anchor: &a [1, 2, 3]\n" + text.replace("\nobjects:", "\nx-alias: *a\nobjects:", 1)
    elif mutation == "non-finite" and not as_json:
        text = text + draw(st.sampled_from(NON_FINITE)) + "\n"
    elif mutation == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif mutation == "empty":
        text = ""
    data = text.encode()
    if mutation == "bom":
        data = b"\xef\xbb\xbf" + data
    elif mutation == "utf16":
        data = text.encode("utf-16")
    elif mutation == "latin1":
        data = text.encode("latin-1", errors="replace") + b"\xe9"
    return ("f.json" if as_json else "f.yaml"), data


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("n", examples(100, 300))
def test_every_command_answers_mutated_files_with_0_1_or_2(n: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    @settings(max_examples=n, deadline=timedelta(seconds=20), suppress_health_check=[HealthCheck.too_slow,
                                                                                      HealthCheck.data_too_large])
    @given(case=file_bytes(), command=st.sampled_from(sorted(COMMANDS)))
    def check(case: tuple[str, bytes], command: str) -> None:
        name, data = case
        path = tmp_path_factory.mktemp("fuzz") / name
        path.write_bytes(data)
        code, out, err = run_cli(COMMANDS[command](str(path)))
        assert code in (0, 1, 2), (code, err)
        if code == 2:
            assert out == "", out[:200]
            assert PROBLEM_LINE.search(err), err[:500]
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < PEAK_RSS_KIB

    check()
