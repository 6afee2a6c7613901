"""`rollwise get`, `get --watch` (in tmux) and `status` against `rollwise up`, through a set whose image breaks and
is then fixed (the fix on apps/v1 includes deleting the stuck pod: kubernetes#67250); and `get` into a pipe, as a
script or `| grep` reads it: no line padded with blanks, a revision spelled one way in the whole output."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zygote
from kubectl_support import DEADLINE, Up, statefulset

pytestmark = pytest.mark.kubectl

PULL = "(ErrImagePull|ImagePullBackOff)"  # the kubelet alternates between the two


def _rollwise(up: Up, *args: str) -> subprocess.CompletedProcess[str]:
    return zygote.run(args, env={**up.env, "NO_COLOR": "1"}, timeout=DEADLINE * 2)


def _set_image(up: Up, image: str) -> None:
    up.kubectl("patch", "sts", "web", "--type=merge", "-p",
               json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}}))


class Tmux:
    """A tmux server of its own (its own socket), killed at the end."""

    def __init__(self, tmp: Path) -> None:
        self.socket = str(tmp / "tmux.sock")

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, check=True,
                              timeout=DEADLINE).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-J", "-S", "-", "-t", "watch")  # -J: wrapped lines joined

    def kill(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, check=False,
                       timeout=DEADLINE)


def _watch(up: Up, tmp: Path, *, width: int) -> Tmux:
    """``rollwise get sts/web --watch`` in a tmux session of its own, ``width`` columns wide (skips without tmux)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    tmux = Tmux(tmp)
    command = " ".join(shlex.quote(a) for a in ["env", f"KUBECONFIG={up.env['KUBECONFIG']}",
                                                 f"HOME={up.env['HOME']}", sys.executable, "-m", "rollwise",
                                                 "get", "sts/web", "--watch"])
    tmux.run("new-session", "-d", "-s", "watch", "-x", str(width), "-y", "40", command)
    return tmux


def test_get_status_and_watch_follow_a_broken_image_and_its_fix(up: Up, tmp_path: Path) -> None:
    up.apply(statefulset("web", replicas=3, claims=False))
    ready = _rollwise(up, "status", "sts/web", "--timeout", "60s")
    assert ready.returncode == 0, ready.stderr
    assert ready.stdout.splitlines()[-1].startswith("✔ Healthy - rollout complete: 3 pods at revision ")

    _set_image(up, "nginx:typo")
    up.until(lambda: "ImagePullBackOff" in _rollwise(up, "get", "sts/web").stdout, "web-2 cannot pull its image")
    shown = _rollwise(up, "get", "sts/web").stdout
    line = next(row for row in shown.splitlines() if row.split()[1:2] == ["web-2"])
    assert line.startswith("✖  web-2 ")
    assert re.search(f"rollout waits here: container app is {PULL}$", line), line
    assert "Status:      ◌ Progressing" in shown
    assert re.search(f"Message: +waiting for web-2 to become available: container app is {PULL}", shown), shown
    assert "\x1b[" not in shown  # NO_COLOR and a pipe: words and icons only

    stuck = _rollwise(up, "status", "sts/web", "--timeout", "2s")
    assert stuck.returncode == 3  # timed out (docs/watching-rollouts.md: exit codes)
    assert re.fullmatch(f"◌ Progressing - waiting for web-2 to become available: container app is {PULL}",
                        stuck.stdout.splitlines()[-1]), stuck.stdout
    assert stuck.stderr.startswith("error: timed out after 2s waiting for statefulset.apps/web at pod web-2: ")

    tmux = _watch(up, tmp_path, width=100)  # a plain, narrow terminal
    try:
        up.until(lambda: re.search(f"rollout waits here: container app is {PULL}", tmux.screen()) is not None,
                 "the watch shows the stuck pod", on_fail=tmux.screen)
        _set_image(up, "nginx:1.27")
        up.kubectl("delete", "pod", "web-2", "--wait=false")
        up.until(lambda: "rollout complete: 3 pods" in tmux.screen(), "the watch follows the fix to the end",
                 on_fail=tmux.screen)
        screen = tmux.screen()
        assert screen.count("Name:") == 1, screen  # redrawn in place, not scrolled
        assert "Status:      ✔ Healthy" in screen
        assert "nginx:1.27" in screen
        assert not re.search(PULL, screen.split("Events:")[0])
        pods = [row.split() for row in screen.splitlines() if row.split()[1:2] and row.split()[1].startswith("web-")]
        assert [cells[0] for cells in pods] == ["✔"] * 3
    finally:
        tmux.kill()

    done = _rollwise(up, "status", "sts/web", "--timeout", "60s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("✔ Healthy - rollout complete: 3 pods")

    plugin_dir = Path(sys.executable).parent  # `kubectl rollwise status` runs kubectl-rollwise from PATH
    if (plugin_dir / "kubectl-rollwise").exists():
        env = {**up.env, "PATH": f"{plugin_dir}{os.pathsep}{up.env.get('PATH', os.environ['PATH'])}"}
        plugin = subprocess.run([up.kubectl_path, "rollwise", "status", "sts/web", "--timeout=60s"], env=env,
                                capture_output=True, text=True, timeout=DEADLINE * 2, check=False)
        assert plugin.returncode == 0, plugin.stderr
        assert plugin.stdout.splitlines()[-1].startswith("✔ Healthy - rollout complete: 3 pods")


def test_get_into_a_pipe_pads_no_line_and_spells_each_revision_one_way(up: Up) -> None:
    up.apply(statefulset("web", replicas=2, claims=False))
    assert _rollwise(up, "status", "sts/web", "--timeout", "60s").returncode == 0
    shown = _rollwise(up, "get", "sts/web")
    assert shown.returncode == 0, shown.stderr
    padded = [line for line in shown.stdout.splitlines() if line != line.rstrip()]
    assert padded == [], "lines ending in blanks"
    revision = up.read("sts", "web")["status"]["updateRevision"]
    digest = revision.removeprefix("web-")
    assert re.search(rf"Progressing=True RolloutComplete: .* {revision}", shown.stdout), shown.stdout
    bare = re.findall(rf"(?<![\w-]){digest}", shown.stdout)
    assert bare == [], f"{digest} also shown without its set's name: {shown.stdout}"
    assert shown.stdout.count(revision) >= 4, "the header, the condition and each pod's line"


def test_get_and_watch_show_a_canary_step_its_stable_revision_and_its_abort(up: Up, tmp_path: Path) -> None:
    up.apply(statefulset("web", replicas=3, claims=False,
                         strategy="{type: RollingUpdate, rollingUpdate: {steps: [{replicas: 1}, {pause: {}}]}}"))
    assert _rollwise(up, "status", "sts/web", "--timeout", "60s").returncode == 0
    stable = up.read("sts", "web")["status"]["currentRevision"]
    shown = _rollwise(up, "get", "sts/web").stdout
    assert "Steps:       2 steps; no rollout under way" in shown and f"Stable:      {stable}" in shown

    tmux = _watch(up, tmp_path, width=120)
    try:
        up.until(lambda: "no rollout under way" in tmux.screen(), "the watch shows the steps", on_fail=tmux.screen)
        _set_image(up, "nginx:1.27")
        up.until(lambda: "Steps:       step 2/2 pause until promoted" in tmux.screen(),
                 "the watch shows the canary held at its pause", on_fail=tmux.screen)
        assert f"Stable:      {stable}" in tmux.screen()
        aborted = _rollwise(up, "rollout", "abort", "sts/web")
        assert aborted.returncode == 0, aborted.stderr
        up.until(lambda: "Aborted:     aborted by rollwise rollout abort" in tmux.screen(),
                 "the watch shows the abort and why", on_fail=tmux.screen)
        up.until(lambda: "Steps:       aborted" in tmux.screen() and "Degraded" in tmux.screen(),
                 "the watch shows the rollout aborted", on_fail=tmux.screen)
        assert tmux.screen().count("Name:") == 1  # redrawn in place
    finally:
        tmux.kill()
    status = _rollwise(up, "status", "sts/web", "--timeout", "5s")
    assert status.returncode == 1 and "RolloutAborted" in status.stdout.splitlines()[-1]
