"""A real Prometheus (Debian's ``prometheus`` package) for tests: the binary started here with a config of its own in a
temporary directory, listening on a free port of 127.0.0.1, its TSDB in that directory, scraping the targets it is
given every second; stopped by its pid (SIGTERM, then SIGKILL). The package's systemd service plays no part.

``prometheus_binary()`` is None where the package is not installed; tests skip, saying so (.ci/run installs it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["NOT_INSTALLED", "Prometheus", "prometheus_binary", "running_prometheus"]

NOT_INSTALLED = "no prometheus executable (Debian's prometheus package is not installed; .ci/run installs it)"
START_DEADLINE = 60.0
SCRAPE_SECONDS = 1


def prometheus_binary() -> str | None:
    return shutil.which("prometheus")


@dataclass
class Prometheus:
    address: str
    """``http://127.0.0.1:PORT``: what an AnalysisTemplate's ``provider.prometheus.address`` names."""
    proc: subprocess.Popen[bytes]
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(targets: Mapping[str, str]) -> str:
    """One scrape job ``etcd``; each target (``host:port``) labelled ``pod`` with the name it is given, so a query
    can name a member (``etcd_server_is_leader{pod="etcd-1"}``)."""
    return yaml.safe_dump({
        "global": {"scrape_interval": f"{SCRAPE_SECONDS}s", "scrape_timeout": f"{SCRAPE_SECONDS}s",
                   "evaluation_interval": f"{SCRAPE_SECONDS}s"},
        "scrape_configs": [{"job_name": "etcd", "static_configs": [
            {"targets": [target], "labels": {"pod": pod}} for pod, target in sorted(targets.items())]}],
    })


def _ready(address: str) -> bool:
    try:
        with urllib.request.urlopen(f"{address}/-/ready", timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=START_DEADLINE)
            return
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def _start(binary: str, tmp: Path, attempt: int) -> Prometheus:
    port = _free_port()
    address = f"http://127.0.0.1:{port}"
    log = tmp / f"prometheus-{attempt}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1h"],
            stdout=subprocess.DEVNULL, stderr=out, stdin=subprocess.DEVNULL)
    end = time.monotonic() + START_DEADLINE
    while proc.poll() is None and time.monotonic() < end and not _ready(address):
        time.sleep(0.1)
    if proc.poll() is None and _ready(address):
        return Prometheus(address=address, proc=proc, log=log)
    _stop(proc)
    raise RuntimeError(f"prometheus did not become ready at {address}:\n{log.read_text(errors='replace')[-2000:]}")


@contextlib.contextmanager
def running_prometheus(tmp: Path, targets: Mapping[str, str]) -> Iterator[Prometheus]:
    """Prometheus scraping ``targets`` (name -> ``host:port``, served at ``/metrics``) until the block ends. The
    free port is chosen before Prometheus binds it, so another process may take it first: a start that fails is
    tried again on another port, twice."""
    binary = prometheus_binary()
    if binary is None:
        raise RuntimeError(NOT_INSTALLED)
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "prometheus.yml").write_text(_config(targets), encoding="utf-8")
    for attempt in range(3):
        try:
            server = _start(binary, tmp, attempt)
            break
        except RuntimeError:
            if attempt == 2:
                raise
    try:
        yield server
    finally:
        _stop(server.proc)
