"""`rollwise migrate` back and forth between apps/v1 and the custom kind, with `rollwise run` (the real operator
process) leading against `rollwise up`: every pod keeps its uid on every hand-over, and "none restarted" is only
printed when that is true (issue 38: the operator's stale cache re-adopted the orphans of the custom set it had
just lost, and the garbage collector then deleted them with their gone owner). Also with the operator's caches
made stale (every watch event delayed) and with the operator killed and replaced in the middle of a hand-over."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import DEADLINE, Up, statefulset
from operator_support import Operator, get_json, leading_operator, migrate, running_up_for_operator
from zygote import spawn

pytestmark = pytest.mark.kubectl

ROUNDS = 10


STALE = "--faults=watch-delay=0.01"
"""Every watch event reaches the operator 10 ms after the one before it: its caches of sets and pods lag, each
by its own amount."""


# Stale caches are the harder case and stay in make test; fresh ones run in make test-slow.
@pytest.fixture(params=[pytest.param("", marks=pytest.mark.slow), STALE], ids=["fresh-caches", "stale-caches"])
def up(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Up]:
    with running_up_for_operator(tmp_path, *[f for f in [request.param] if f]) as server:
        yield server


@pytest.fixture
def plain_up(tmp_path: Path) -> Iterator[Up]:
    with running_up_for_operator(tmp_path) as server:
        yield server


def _uids(up: Up) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in get_json(up, "pods", "-l", "app=web")["items"]}


def _controller_uid(pod: dict[str, Any]) -> str | None:
    refs = [r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")]
    return refs[0]["uid"] if refs else None


def _owned_by(up: Up, resource: str, uids: dict[str, str]) -> bool:
    """Every pod of ``uids`` still exists with its uid and is controlled by the set ``web`` of ``resource``."""
    owner = get_json(up, resource, "web", check=False)
    if not owner:
        return False
    pods = get_json(up, "pods", "-l", "app=web")["items"]
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == uids and all(
        _controller_uid(p) == owner["metadata"]["uid"] for p in pods)


def _hand_over(up: Up, args: tuple[str, ...], resource: str, before: dict[str, str], round_: int) -> None:
    done = migrate(up, *args)
    assert done.returncode == 0, f"round {round_}: migrate {' '.join(args)}: {done.stdout}{done.stderr}"
    assert "none restarted" in done.stdout
    assert _uids(up) == before, f"round {round_}: migrate {' '.join(args)} said none restarted"
    # Later than the command's own check: a re-adoption by a stale cache and the garbage collector's delete come
    # after the new owner adopted; the pods must stay the new owner's, with their uids.
    up.until(lambda: _owned_by(up, resource, before), f"round {round_}: the {resource} set keeps every pod")


def _settled_plain_set(up: Up) -> dict[str, str]:
    up.apply(statefulset("web", replicas=3, image="nginx:1.26", claims=False))
    up.until(lambda: (s := get_json(up, "sts", "web").get("status") or {}).get("readyReplicas") == 3
             and s.get("currentRevision") == s.get("updateRevision"), "the plain set settles")
    before = _uids(up)
    assert len(before) == 3
    return before


def test_migrate_both_ways_with_the_operator_running_keeps_every_pod_uid(up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    with leading_operator(up, tmp_path, "op-a"):
        before = _settled_plain_set(up)
        for round_ in range(ROUNDS):
            _hand_over(up, ("sts/web",), "rsts", before, round_)
            _hand_over(up, ("rsts/web", "--to", "apps/v1"), "sts", before, round_)


def test_an_operator_killed_in_the_middle_of_a_hand_over_loses_no_pod(plain_up: Up, tmp_path: Path) -> None:
    """SIGKILL once the old set is fenced; a new operator process takes the lease over and finishes the job."""
    up = plain_up
    up.install_rollwise()
    op = Operator(up, tmp_path, "op-0")
    try:
        op.wait_for("op-0 started leading")
        before = _settled_plain_set(up)
        for n, (args, resource) in enumerate([(("sts/web",), "rsts"), (("rsts/web", "--to", "apps/v1"), "sts")] * 2):
            proc = spawn(["migrate", *args, "--kubeconfig", str(up.kubeconfig)], env=up.env)
            assert proc.stdout is not None
            first = proc.stdout.readline()
            assert " fenced " in first, first
            os.kill(op.proc.pid, signal.SIGKILL)
            op.proc.wait()
            op = Operator(up, tmp_path, f"op-{n + 1}")
            out, err = proc.communicate(timeout=DEADLINE * 2)
            assert proc.wait() == 0, f"hand-over {n}: {first}{out}{err}"
            assert "none restarted" in out and _uids(up) == before
            up.until(lambda r=resource: _owned_by(up, r, before), f"hand-over {n}: the {resource} set keeps every pod")
    finally:
        assert op.stop() == 0
