"""`rollwise get` into a pipe against `rollwise up`, as a script or `| grep` reads it: no line padded with blanks,
and a revision spelled one way in the whole output (the controller's conditions name it in full)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import zygote
from kubectl_support import DEADLINE, Up, running_up, statefulset

pytestmark = pytest.mark.kubectl


@pytest.fixture
def up(tmp_path: Path) -> Iterator[Up]:
    with running_up(tmp_path) as server:
        yield server


def _rollwise(up: Up, *args: str) -> subprocess.CompletedProcess[str]:
    return zygote.run(args, env={**up.env, "NO_COLOR": "1"}, timeout=DEADLINE * 2)


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
