"""The console examples in README.md and docs/*.md print what they show.

A newcomer pastes `$ .venv/bin/rollwise ...` from the README and compares; an example whose output drifted teaches
the wrong thing. Every such example whose inputs are at hand is run here and its shown lines are matched against
what the command prints: a line `...` stands for any number of lines, a line ending in ` ...` for any ending.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rollwise.cli import main
from test_docs_links import ROOT, doc_files

_PROMPT = "$ .venv/bin/rollwise "
# Not run here: a command sent to the background (`up`, `run`) serves until stopped, and the kubectl tests drive
# those; the explorer at its default bounds takes ~11 CPU s, and the explore matrix test covers those bounds.
_NOT_RUN = re.compile(r"(^explore (?!.*--replicas 2))|&$")
# `validate`'s examples read files the page describes rather than ships; these are they.
_NAN_YAML = "name: nan\nlimitSeconds: .nan\n"
_MANIFESTS_YAML = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "app:v1"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: front}
spec: {}
"""


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    args: tuple[str, ...]
    shown: tuple[str, ...]


def console_examples(path: Path) -> list[Example]:
    """Each `$ .venv/bin/rollwise ...` command of a ```console block, with the lines shown up to the next prompt."""
    examples: list[Example] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    in_console = False
    current: tuple[int, list[str], list[str]] | None = None
    for number, line in enumerate(lines, start=1):
        if line.startswith("```"):
            if current:
                examples.append(_example(path, current))
                current = None
            in_console = line.strip() == "```console" and not in_console
            continue
        if not in_console:
            continue
        if line.startswith("$ "):
            if current:
                examples.append(_example(path, current))
            current = (number, [line], []) if line.startswith(_PROMPT) else None
        elif current:
            if current[1][-1].endswith("\\") and not current[2]:
                current[1].append(line)  # a command continued on the next line
            else:
                current[2].append(line.rstrip())
    return examples


def _example(path: Path, found: tuple[int, list[str], list[str]]) -> Example:
    number, command, shown = found
    text = " ".join(part.rstrip("\\").strip() for part in command)[len(_PROMPT):]
    return Example(path.name, number, tuple(text.split()), tuple(shown))


def shown_matches(shown: tuple[str, ...], printed: list[str]) -> str | None:
    """None when the printed lines are what is shown (with its elisions), else the first shown line not printed."""
    segments: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == "...":
            segments.append([])
        else:
            segments[-1].append(line)
    anchored_start, anchored_end = bool(segments[0]), bool(segments[-1])
    position = 0
    for index, segment in enumerate(segments):
        if not segment:
            continue
        starts = [position] if index == 0 and anchored_start else range(position, len(printed))
        matched = {start: _lines_matching(segment, printed, start) for start in starts}
        found = next((start for start, count in matched.items() if count == len(segment)), None)
        if found is None:
            best = max(matched.values(), default=0)
            return segment[best]  # the first line that differs where the segment came closest
        position = found + len(segment)
    if anchored_end and position != len(printed):
        return f"(nothing more), but the command went on with: {printed[position]!r}"
    return None


def _lines_matching(segment: list[str], printed: list[str], start: int) -> int:
    """How many of the segment's lines match the printed ones from ``start`` on, before the first that does not."""
    count = 0
    for want, got in zip(segment, printed[start:], strict=False):
        if not (want == got or (want.endswith(" ...") and got.startswith(want[:-4]))):
            break
        count += 1
    return count


def _all_examples() -> list[Example]:
    return [e for page in doc_files() for e in console_examples(page) if not _NOT_RUN.search(" ".join(e.args))]


@pytest.mark.parametrize("example", _all_examples(), ids=lambda e: f"{e.page}:{e.line}")
def test_console_example_prints_what_it_shows(example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "bad.yaml").write_text(_bad_yaml_from_docs(), encoding="utf-8")
    (tmp_path / "nan.yaml").write_text(_NAN_YAML, encoding="utf-8")
    (tmp_path / "manifests.yaml").write_text(_MANIFESTS_YAML, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = list(example.args)
    if args[0] == "demo":
        args.append("--no-plots")  # the tables are the same; the plots would only cost time and files
    main(args)  # in this process: a subprocess per example would spend most of its time importing
    captured = capsys.readouterr()
    printed = [line.rstrip() for line in (captured.out + captured.err).splitlines()]
    missing = shown_matches(example.shown, printed)
    assert missing is None, f"{example.page}:{example.line}: not printed: {missing!r}\nprinted:\n" + "\n".join(printed)


def _bad_yaml_from_docs() -> str:
    """The `bad.yaml` that docs/scenarios.md shows, so the page's file and its output stay one."""
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    match = re.search(r"Here `bad.yaml` is:\n\n```yaml\n(.*?)```", text, re.DOTALL)
    assert match, "docs/scenarios.md no longer shows bad.yaml"
    return match.group(1)


def test_the_pages_hold_runnable_examples() -> None:
    commands = {e.args[0] for e in _all_examples()}
    assert {"simulate", "compare", "plan", "validate", "explore", "demo"} <= commands


def test_elisions_match_any_lines_and_a_drifted_line_is_found() -> None:
    printed = ["title", "a", "b", "c", "summary 1"]
    assert shown_matches(("title", "...", "c", "summary 1"), printed) is None
    assert shown_matches(("...", "b", "...",), printed) is None
    assert shown_matches(("tit ...", "a"), printed) == "(nothing more), but the command went on with: 'b'"
    assert shown_matches(("title", "...", "summary 2"), printed) == "summary 2"
    assert shown_matches(("...", "a", "b", "d"), printed) == "d"  # the line that drifted, not the segment's first
    assert shown_matches(("a", "...",), printed) == "a"  # the output starts with "title", not "a"
