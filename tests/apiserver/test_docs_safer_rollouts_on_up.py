"""docs/safer-rollouts.md's walk-throughs, pasted into bash against `rollwise up` with the real kubectl, do what
the page says. The pre-delete hook: the new image marks hooked-2 PreparingDelete and waits; removing its label lets
it go, the new hooked-2 carries the label again, and hooked-1 is marked next; the `rollwise validate` warning the page
shows for a template without the label is what the command prints. The pause: a new image replaces nothing while
paused, a scale still scales, and the resume rolls the set to it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubectl_support import DEADLINE, ROOT, Up, running_up_with_plugin, statefulset

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


def _paste(up: Up, script: str) -> None:
    env = {**up.env, "PATH": f"{Path(up.kubectl_path).parent}{os.pathsep}{up.env.get('PATH', '')}"}
    done = subprocess.run(["bash", "-e"], input=script, text=True, capture_output=True, env=env,
                          timeout=DEADLINE * 2, check=False)
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"


def _pods(up: Up) -> dict[str, Any]:
    return _pods_of(up, "hooked")


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


@pytest.mark.kubectl
def test_the_pause_walkthrough_does_what_the_page_says(tmp_path: Path) -> None:
    [block] = [b for b in _blocks() if any(line.startswith("kubectl rollwise rollout pause rsts/web") for line in b)]
    pause, patch, scale, resume = block
    with running_up_with_plugin(tmp_path) as up:
        custom = statefulset("web", replicas=3, claims=False).replace("apiVersion: apps/v1",
                                                                       "apiVersion: apps.rollwise.dev/v1alpha1")
        up.apply(custom)
        up.kubectl("wait", "--for=condition=Ready", "rsts/web", f"--timeout={DEADLINE:.0f}s")
        uids = {name: pod["metadata"]["uid"] for name, pod in _pods_of(up, "web").items()}
        _paste(up, pause + "\n" + patch + "\n")
        up.until(lambda: _progressing(up)["reason"] == "RolloutPaused", "Progressing says RolloutPaused")
        assert {name: pod["metadata"]["uid"] for name, pod in _pods_of(up, "web").items()} == uids, "none replaced"
        _paste(up, scale + "\n")
        up.until(lambda: "web-3" in _pods_of(up, "web"), "still scales")
        _paste(up, resume + "\n")
        up.until(lambda: all(p["spec"]["containers"][0]["image"] == "nginx:1.28" for p in _pods_of(up, "web").values())
                 and len(_pods_of(up, "web")) == 4, "the rollout goes on to nginx:1.28")


def _pods_of(up: Up, app: str) -> dict[str, Any]:
    return {p["metadata"]["name"]: p for p in up.read("pods", "-l", f"app={app}")["items"]}


def _progressing(up: Up) -> dict[str, Any]:
    return next(c for c in up.read("rsts", "web")["status"]["conditions"] if c["type"] == "Progressing")


@pytest.mark.kubectl
def test_on_up_a_hook_the_template_gives_no_pod_is_a_warning_event_with_each_deletion(up: Up) -> None:
    before, _ = _walkthrough()
    manifest = yaml.safe_load(before.split("<<'YAML'\n", 1)[1].split("\nYAML\n", 1)[0])
    del manifest["spec"]["template"]["metadata"]["labels"]["example.com/drain"]
    up.apply(yaml.safe_dump(manifest))
    up.kubectl("wait", "--for=condition=Ready", "rsts/hooked", f"--timeout={DEADLINE:.0f}s")
    [patch] = [line for line in before.splitlines() if line.startswith("kubectl patch rsts hooked")]
    _paste(up, patch + "\n")

    def warned() -> list[str]:
        shown = up.kubectl("get", "events", "--field-selector", "reason=PreDeleteHookUnused", "-o",
                           "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}").stdout
        return [line for line in shown.splitlines() if line]

    up.until(lambda: len(warned()) == 3, "a Warning with each of the three deletions")
    assert all(m.endswith("deleted without waiting: no pod of spec.template carries example.com/drain=pending: "
                          "each is deleted without waiting unless something labels it first (add the label to "
                          "spec.template.metadata.labels to hook every pod from its start)") for m in warned())
