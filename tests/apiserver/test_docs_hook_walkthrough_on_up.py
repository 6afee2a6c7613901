"""docs/safer-rollouts.md's pre-delete hook walk-through, pasted into bash against `rollwise up` with the real
kubectl, does what the page says: the new image marks hooked-2 PreparingDelete and waits; removing its label lets it
go, the new hooked-2 carries the label again, and hooked-1 is marked next. The `rollwise validate` warning the page
shows for a template without the label is what the command prints."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubectl_support import DEADLINE, ROOT, Up, running_up

from rollwise.cli import main

PAGE = ROOT / "docs" / "safer-rollouts.md"
RELEASE = "kubectl label pod hooked-2 example.com/drain-"


def _blocks() -> list[list[str]]:
    """The page's fenced blocks, line by line."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def _walkthrough() -> tuple[str, str]:
    """The walk-through up to the release, and the release line (as pasted)."""
    [block] = [b for b in _blocks() if any(line.startswith(RELEASE) for line in b)]
    at = next(i for i, line in enumerate(block) if line.startswith(RELEASE))
    return "\n".join(block[:at]) + "\n", block[at] + "\n"


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    with running_up(tmp_path) as server:
        yield server


def _paste(up: Up, script: str) -> None:
    env = {**up.env, "PATH": f"{Path(up.kubectl_path).parent}{os.pathsep}{up.env.get('PATH', '')}"}
    done = subprocess.run(["bash", "-e"], input=script, text=True, capture_output=True, env=env,
                          timeout=DEADLINE * 2, check=False)
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"


def _pods(up: Up) -> dict[str, Any]:
    return {p["metadata"]["name"]: p for p in up.read("pods", "-l", "app=hooked")["items"]}


def _marked(pod: Any) -> bool:
    return pod["metadata"].get("labels", {}).get("rollwise.dev/lifecycle-state") == "PreparingDelete"


@pytest.mark.kubectl
def test_the_pre_delete_hook_walkthrough_does_what_the_page_says(up: Up) -> None:
    before, release = _walkthrough()
    _paste(up, before)
    up.until(lambda: _marked(_pods(up).get("hooked-2", {"metadata": {}})), "hooked-2 marked PreparingDelete")
    first = _pods(up)["hooked-2"]["metadata"]["uid"]
    progressing = next(c for c in up.read("rsts", "hooked")["status"]["conditions"] if c["type"] == "Progressing")
    assert "waiting for hooked-2 to be released by its pre-delete hook" in progressing["message"]
    assert _pods(up)["hooked-2"]["metadata"]["uid"] == first, "held: not deleted while it carries the label"

    _paste(up, release)

    def moved_on() -> bool:
        pods = _pods(up)
        new = pods.get("hooked-2")
        return (new is not None and new["metadata"]["uid"] != first and "hooked-1" in pods
                and _marked(pods["hooked-1"]))

    up.until(moved_on, "hooked-2 replaced and hooked-1 marked next")
    again = _pods(up)["hooked-2"]
    assert again["metadata"]["labels"]["example.com/drain"] == "pending", "the template hooks the new pod too"
    assert again["spec"]["containers"][0]["image"] == "nginx:1.28"


def test_the_validate_warning_the_page_shows_is_what_validate_prints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    before, _ = _walkthrough()
    manifest = yaml.safe_load(before.split("<<'YAML'\n", 1)[1].split("\nYAML\n", 1)[0])
    monkeypatch.chdir(tmp_path)
    Path("hooked.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    assert main(["validate", "hooked.yaml"]) == 0
    assert capsys.readouterr() == ("hooked.yaml: valid manifest\n", ""), "the page's set hooks every pod: no warning"
    del manifest["spec"]["template"]["metadata"]["labels"]["example.com/drain"]
    Path("hooked.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    assert main(["validate", "hooked.yaml"]) == 0
    out, err = capsys.readouterr()
    assert out == "hooked.yaml: valid manifest\n"
    [shown] = [line for b in _blocks() for line in b if line.startswith("Warning: hooked.yaml: ")]
    assert err == shown + "\n"
