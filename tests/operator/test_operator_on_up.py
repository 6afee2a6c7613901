"""The operator against `rollwise up`: `kubectl apply -k deploy/`, then `rollwise run` (its own bearer token) rolls a
custom-resource set, writes its events, and releases its lease on SIGTERM. Only the operator writes pods.

`up` runs with `--controllers=*,-apps.rollwise.dev`, so the custom kind is left to the operator (operator-plan §4,
scenario C). Every process is started here and ended by its pid; every wait has a deadline.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubectl_support import DEADLINE, Up
from operator_support import (
    WEB,
    Operator,
    audit_entries,
    get_json,
    leading_operator,
    rolled_out,
    running_up_for_operator,
)
from tiers import sweep

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]


def _rolled_out(up: Up, image: str) -> bool:
    return rolled_out(up, "web", 3, image)


# The older httpx path is kept end to end, in make test-slow (CI runs both tiers).
@pytest.mark.parametrize("transport", sweep([("direct",), ("httpx",)], fast={("direct",)}))
def test_the_operator_rolls_a_custom_resource_set_and_only_it_writes_pods(up: Up, tmp_path: Path,
                                                                           transport: str) -> None:
    up.install_rollwise()  # "direct" is the default; "httpx" is lightkube over httpx's own pool, end to end
    with leading_operator(up, tmp_path, "op-a", "--http-transport", transport):
        up.apply(WEB)
        up.until(lambda: _rolled_out(up, "nginx:1.27"), "the set comes up through the operator")
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
                   '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}')
        up.until(lambda: _rolled_out(up, "nginx:1.28"), "the rollout completes through the operator")
        described = up.kubectl("describe", "rsts", "web").stdout
        assert "SuccessfulDelete" in described and "rollwise" in described
        scaled = up.kubectl("scale", "rsts/web", "--replicas=4")
        assert scaled.returncode == 0
        up.until(lambda: len(get_json(up, "pods", "-l", "app=web")["items"]) == 4, "the scale subresource reaches it")
    lease = get_json(up, "lease", "-n", "rollwise-system", "rollwise")["spec"]
    assert lease["holderIdentity"] == "" and lease["leaseDurationSeconds"] == 1
    writes = [e for e in audit_entries(up) if e["verb"] in ("create", "update", "patch", "delete")]
    pod_writers = {e["user"] for e in writes if e["resource"] in ("pods", "controllerrevisions.apps")
                   and e["verb"] in ("create", "delete")}
    assert pod_writers == {"op-a"}
    assert not [e for e in audit_entries(up) if e.get("code") == 403]


def _first_lease_write(up: Up, user: str) -> float:
    return min(e["time"] for e in audit_entries(up) if e["user"] == user
               and e["resource"] == "leases.coordination.k8s.io" and e["verb"] in ("create", "update"))


def _set_writes(up: Up, user: str) -> list[float]:
    return [e["time"] for e in audit_entries(up) if e["user"] == user
            and e["verb"] in ("create", "update", "patch", "delete")
            and e["resource"] in ("pods", "controllerrevisions.apps", "statefulsets.apps.rollwise.dev",
                                  "statefulsets.apps.rollwise.dev/status")]


def test_a_standby_takes_over_from_a_killed_leader_and_a_paused_leader_writes_nothing_after(
        up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    a = Operator(up, tmp_path, "op-a")
    b: Operator | None = None
    c: Operator | None = None
    try:
        a.wait_for(r"op-a started leading")
        b = Operator(up, tmp_path, "op-b")
        b.wait_for(r"caches synced")
        up.apply(WEB)
        up.until(lambda: _rolled_out(up, "nginx:1.27"), "the set comes up through op-a")
        assert _set_writes(up, "op-b") == []  # the standby only watches

        # A paused leader (SIGSTOP past the lease) is replaced, and writes nothing once it runs again.
        os.kill(a.proc.pid, signal.SIGSTOP)
        b.wait_for(r"op-b started leading")
        took_over = _first_lease_write(up, "op-b")
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
                   '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}')
        os.kill(a.proc.pid, signal.SIGCONT)
        assert a.proc.wait(timeout=DEADLINE) == 1  # it found the lease gone and stopped
        up.until(lambda: _rolled_out(up, "nginx:1.28"), "op-b finishes the rollout")
        assert [t for t in _set_writes(up, "op-a") if t > took_over] == []

        # A killed leader (no release): the next replica takes over after the lease runs out.
        c = Operator(up, tmp_path, "op-c")
        c.wait_for(r"caches synced")
        os.kill(b.proc.pid, signal.SIGKILL)
        b.proc.wait(timeout=DEADLINE)
        c.wait_for(r"op-c started leading")
        up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
                   '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.29"}]}}}}')
        up.until(lambda: _rolled_out(up, "nginx:1.29"), "op-c rolls the next change")
        lease = get_json(up, "lease", "-n", "rollwise-system", "rollwise")["spec"]
        assert lease["holderIdentity"] == "op-c" and lease["leaseTransitions"] == 2
    finally:
        for op in (a, b, c):
            if op is not None:
                if op.proc.poll() is None:
                    os.kill(op.proc.pid, signal.SIGCONT)
                op.stop()


@pytest.fixture
def faulty_up(tmp_path: Path) -> Iterator[Up]:
    faults = "compact-every=0.7,drop-watches-every=1.1,conflict-rate=0.1,error-rate=0.1,watch-delay=0.05,seed=5"
    with running_up_for_operator(tmp_path, "--faults", faults) as server:
        yield server


def test_the_operator_finishes_a_rollout_through_410s_dropped_watches_409s_and_500s(
        faulty_up: Up, tmp_path: Path) -> None:
    up = faulty_up

    def kubectl_retrying(*args: str) -> None:  # the faults hit kubectl too
        end = time.monotonic() + DEADLINE
        while up.kubectl(*args, check=False).returncode != 0:
            assert time.monotonic() < end, f"kubectl {args} kept failing"

    kubectl_retrying("apply", "-k", str(ROOT / "deploy" / "crds"))
    kubectl_retrying("apply", "-k", str(ROOT / "deploy"))
    op = Operator(up, tmp_path, "op-a")
    try:
        op.wait_for(r"op-a started leading")
        (tmp_path / "web.yaml").write_text(WEB)
        kubectl_retrying("apply", "-f", str(tmp_path / "web.yaml"))

        def rolled_out(image: str) -> bool:
            try:
                return _rolled_out(up, image)
            except (AssertionError, json.JSONDecodeError):
                return False  # an injected error on the read itself

        up.until(lambda: rolled_out("nginx:1.27"), "the set comes up despite the faults", deadline=120)
        kubectl_retrying("patch", "rsts", "web", "--type=merge", "-p",
                         '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}')
        up.until(lambda: rolled_out("nginx:1.28"), "the rollout completes despite the faults", deadline=120)
    finally:
        code = op.stop()
        rest = []
        while not op.lines.empty():
            rest.append(op.lines.get())
        log = "\n".join(op.log + rest)
        (tmp_path / "operator.log").write_text(log)  # kept when the rollout did not finish too
    at = log.find("Traceback")
    assert at < 0, log[max(0, at - 600):at + 2500]
    assert code == 0

