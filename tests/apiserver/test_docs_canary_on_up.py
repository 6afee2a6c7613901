"""docs/canary.md's walk-through of a canary a metric sends back, pasted into bash against `rollwise up` with the
real kubectl and the real operator (`rollwise run`, as the page starts it beside `up --controllers=-apps.rollwise.dev`):
the page's metric server on 127.0.0.1 (on a free port here), its template and set; the bad release is caught on
`shop-3` alone and the rollout aborts by itself, the AnalysisRun showing the failed measurement; the fix and
`rollwise rollout retry` run a fresh analysis that passes, and the rollout completes. The metric server the page
starts in the background is ended by its pid."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import DEADLINE, ROOT, Up
from operator_support import get_json, leading_operator, running_up_for_operator

pytestmark = pytest.mark.kubectl

PAGE = ROOT / "docs" / "canary.md"
PAGE_PORT = "8181"


def _blocks() -> list[list[str]]:
    """The page's ```bash blocks (the ones meant to be pasted), line by line."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if current is None and line.startswith("```bash"):
            current = []
        elif current is not None and line.startswith("```"):
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def _free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    with running_up_for_operator(tmp_path) as server:
        server.install_rollwise()
        yield server


def _paste(up: Up, cwd: Path, lines: list[str], port: str) -> None:
    script = "\n".join(lines).replace(PAGE_PORT, port) + "\n"
    bin_dir = Path(sys.executable).parent  # rollwise, as the page's PATH has it
    env = {**up.env, "PATH": os.pathsep.join([str(bin_dir), str(Path(up.kubectl_path).parent),
                                              up.env.get("PATH", os.environ["PATH"])])}
    done = subprocess.run(["bash", "-e"], input=script, text=True, capture_output=True, env=env, cwd=cwd,
                          timeout=DEADLINE * 4, check=False)
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"


def _status(up: Up) -> dict[str, Any]:
    return get_json(up, "rsts", "shop").get("status") or {}


def _pods(up: Up) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in get_json(up, "pods", "-l", "app=shop")["items"]
            if not p["metadata"].get("deletionTimestamp")}


def test_the_metric_walkthrough_sends_the_bad_release_back_and_lets_the_fixed_one_through(up: Up,
                                                                                         tmp_path: Path) -> None:
    server, template_and_set, bad, fix = _blocks()
    assert server[1].startswith("python3 -m http.server 8181 ") and server[1].endswith("&")
    port = _free_port()
    work = tmp_path / "walk"
    work.mkdir()
    # The page starts the server in the background; here its pid is kept, to end it after the test.
    _paste(up, work, [*server, "echo $! > server.pid"], port)
    pid = int((work / "server.pid").read_text())
    try:
        with leading_operator(up, tmp_path, "op-a"):
            _paste(up, work, template_and_set, port)
            stable = _status(up)["currentRevision"]
            before = {n: p["metadata"]["uid"] for n, p in _pods(up).items()}
            _paste(up, work, bad, port)
            up.until(lambda: _status(up).get("abort") is True, "the failed measurement aborts the rollout",
                     deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
            up.until(lambda: len(_pods(up)) == 4 and all(
                p["metadata"]["labels"].get("controller-revision-hash") == stable for p in _pods(up).values())
                and _status(up).get("readyReplicas") == 4, "shop-3 back at the stable revision",
                deadline=DEADLINE * 2, on_fail=lambda: str(_status(up)))
            after = {n: p["metadata"]["uid"] for n, p in _pods(up).items()}
            assert {n: after[n] for n in ("shop-0", "shop-1", "shop-2")} == \
                {n: before[n] for n in ("shop-0", "shop-1", "shop-2")}
            assert after["shop-3"] != before["shop-3"]
            (run,) = get_json(up, "ar")["items"]
            assert run["status"]["phase"] == "Failed" and run["metadata"]["name"].endswith("-1")
            assert run["status"]["message"] == \
                'metric error-rate failed: result 0.12 matches failureCondition "result > 0.05"'
            shown = subprocess.run([sys.executable, "-m", "rollwise", "get", "rsts/shop"], env={**up.env,
                                   "NO_COLOR": "1"}, capture_output=True, text=True, timeout=DEADLINE, check=False)
            assert f"Aborted:     aborted by analysis run {run['metadata']['name']} (Failed): " in shown.stdout
            assert f"Stable:      {stable}" in shown.stdout

            _paste(up, work, fix, port)  # ends with `rollwise rollout status`: the rollout completed
            status = _status(up)
            assert status["currentRevision"] == status["updateRevision"] != stable and "abort" not in status
            runs = {r["metadata"]["name"]: r["status"]["phase"] for r in get_json(up, "ar")["items"]}
            assert runs == {run["metadata"]["name"]: "Failed", f"{run['metadata']['name']}.1": "Successful"}
    finally:
        os.kill(pid, signal.SIGTERM)
