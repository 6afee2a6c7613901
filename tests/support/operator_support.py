"""Running `rollwise run` as a process against `rollwise up` in tests: its own token (the audit log names it), its
log lines read with a deadline, SIGTERM then SIGKILL by pid."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import yaml
import zygote
from api_reader import ReadFailed
from kubectl_support import DEADLINE, Up, running_up
from zygote import spawn

__all__ = ["WEB", "Operator", "audit_entries", "get_json", "last_audit_time", "leading_operator", "migrate",
           "pod_writes_since", "rolled_out"]

WEB = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "nginx:1.27"}]}
"""
"""A three-replica set of the custom kind rolling two at a time: what the operator tests apply."""


class Operator:
    """``rollwise run`` as ``identity``. With ``as_documented``, only the flags docs/operator.md's set-up passes
    (and free ports for the probes): its own lease timings, no ``--identity``."""

    def __init__(self, up: Up, tmp: Path, identity: str, *extra: str, as_documented: bool = False) -> None:
        config = yaml.safe_load(up.kubeconfig.read_text())
        for user in config["users"]:
            user["user"] = {"token": identity}  # --any-token: the audit log names this process
        kubeconfig = tmp / f"{identity}.yaml"
        kubeconfig.write_text(yaml.safe_dump(config))
        flags = [] if as_documented else [
            "--leader-elect", "--identity", identity, "--lease-namespace", "rollwise-system", "--lease-duration", "3s",
            "--renew-deadline", "2s", "--retry-period", "0.5s"]
        self.proc = spawn(["run", "--kubeconfig", str(kubeconfig), *flags, "--health-addr", "127.0.0.1:0",
                           "--metrics-addr", "127.0.0.1:0", *extra], env=up.env)
        self.lines: Queue[str] = Queue()
        self.log: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str) -> re.Match[str]:
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=0.5)
            except Empty:
                continue
            self.log.append(line)
            found = re.search(pattern, line)
            if found:
                return found
        raise AssertionError(f"operator never logged {pattern!r}:\n" + "\n".join(self.log[-30:]))

    def stop(self) -> int:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                return self.proc.wait(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
        return self.proc.wait()


def migrate(up: Up, *args: str) -> subprocess.CompletedProcess[str]:
    """``rollwise migrate ARGS`` against ``up``, as a user runs it."""
    return zygote.run(["migrate", *args, "--kubeconfig", str(up.kubeconfig)], env=up.env, timeout=DEADLINE * 2)


def get_json(up: Up, *args: str, check: bool = True) -> Any:
    """The object(s) as ``kubectl get -o json`` prints them, read over the API (``Up.read``: tests poll with it);
    with ``check=False``, ``{}`` where kubectl would fail (e.g. NotFound)."""
    try:
        return up.read(*args)
    except ReadFailed:
        if check:
            raise
        return {}



def rolled_out(up: Up, name: str, replicas: int, image: str) -> bool:
    """The custom-resource set ``name`` (pods labelled ``app=<name>``) observed its latest generation and runs
    ``replicas`` Ready pods of ``image``, all at the update revision."""
    sts = get_json(up, "rsts", name)
    status = sts.get("status") or {}
    pods = get_json(up, "pods", "-l", f"app={name}")["items"]
    return (status.get("observedGeneration") == sts["metadata"]["generation"]
            and status.get("updatedReplicas") == replicas and status.get("readyReplicas") == replicas
            and status.get("currentRevision") == status.get("updateRevision")
            and len(pods) == replicas and all(p["spec"]["containers"][0]["image"] == image for p in pods))


def audit_entries(up: Up) -> list[dict[str, Any]]:
    return [json.loads(line) for line in up.audit_log.read_text().splitlines() if line.strip()]


def last_audit_time(up: Up) -> float:
    """The newest audit entry's time: a mark to ask, after a change, which writes followed it."""
    return max(e["time"] for e in audit_entries(up))


def pod_writes_since(up: Up, since: float, verbs: tuple[str, ...] = ("create", "delete")) -> list[tuple[str, str]]:
    """``(verb, pod)`` for every pod write of ``verbs`` from ``since`` on: ``[]`` is what an update that keeps its
    pods (in place, a claim resize) must leave in the audit log."""
    return [(e["verb"], e.get("name", "")) for e in audit_entries(up)
            if e["resource"] == "pods" and e["verb"] in verbs and e["time"] >= since]


@contextlib.contextmanager
def leading_operator(up: Up, tmp: Path, identity: str = "op-a", *extra: str) -> Iterator[Operator]:
    """`rollwise run` as ``identity`` once it leads; after the test it must stop cleanly (exit 0) on SIGTERM."""
    op = Operator(up, tmp, identity, *extra)
    try:
        op.wait_for(rf"{identity} started leading")
        yield op
    finally:
        assert op.stop() == 0


@contextlib.contextmanager
def running_up_for_operator(tmp: Path, *extra: str, companion: bool = True) -> Iterator[Up]:
    """``rollwise up`` that leaves the custom kind to the operator under test (and, with ``companion`` false, the
    quorum-aware companion too); any bearer token is a user, so the audit log names each operator process."""
    off = "-apps.rollwise.dev" if companion else "-apps.rollwise.dev,-quorum"
    with running_up(tmp, f"--controllers={off}", "--any-token", *extra) as server:
        yield server
