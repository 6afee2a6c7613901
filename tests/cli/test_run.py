"""`rollwise run`: flags, and the process's probes, metrics and SIGTERM handling without an API server.

Its integration tests (a rollout through the operator, failover between two processes) need `rollwise up`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from lightkube.config.kubeconfig import KubeConfig
from prometheus_client import CollectorRegistry

from rollwise.cli import main
from rollwise.cli.kubeconfig import ClientConfig
from rollwise.cli.run import _client, add_run, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [("15s", 15.0), ("500ms", 0.5), ("1m", 60.0), ("2", 2.0),
                                               ("0.5s", 0.5), ("1h", 3600.0)])
def test_durations_read_as_go_writes_them(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(("flags", "message"), [
    (["--lease-duration", "10s"], "leaseDuration (10 s) must be greater than renewDeadline (10 s)"),
    (["--retry-period", "9s"], "must be greater than 1.2 x retryPeriod"),
    (["--metrics-addr", "localhost"], "--metrics-addr: address 'localhost' must look like HOST:PORT"),
    (["--metrics-addr", ":99999"], "--metrics-addr: address ':99999' must look like HOST:PORT or :PORT, the port from"),
    (["--health-addr", "127.0.0.1:65536"], "--health-addr: address"),
    (["--trace", "/nonexistent/decisions.jsonl"], "--trace /nonexistent/decisions.jsonl: its directory does not exist"),
    (["--trace", "/"], "--trace /: a directory, not a file"),
])
def test_invalid_settings_exit_2_with_the_rule(flags: list[str], message: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *flags]) == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err


@pytest.mark.parametrize("flags", [["--controllers", "statefulset,bogus"], ["--lease-duration", "soon"]])
def test_unknown_controllers_and_bad_durations_are_usage_errors(flags: list[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", *flags])
    assert caught.value.code == 2


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_without_a_reachable_server_it_serves_probes_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
        f"clusters: [{{name: t, cluster: {{server: 'http://127.0.0.1:{_closed_port()}'}}}}]\n"
        "users: [{name: u, user: {token: op-a}}]\n"
        "contexts: [{name: t, context: {cluster: t, user: u}}]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("KUBERNETES_SERVICE_HOST", "KUBECONFIG")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rollwise", "run", "--kubeconfig", str(kubeconfig), "--leader-elect",
         "--identity", "op-a", "--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
         "--log-level", "ERROR"], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr or ()], daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        ports = None
        while ports is None:
            assert time.monotonic() < deadline, "no port line"
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            ports = re.search(r"health on port (\d+), metrics on port (\d+)", line)
        health, metrics = ports.group(1), ports.group(2)
        status, body = _get(f"http://127.0.0.1:{health}/readyz")
        assert status == 503 and "informer" in body  # caches cannot sync without a server
        assert _get(f"http://127.0.0.1:{health}/healthz")[0] == 200
        status, body = _get(f"http://127.0.0.1:{metrics}/metrics")
        assert status == 200 and 'leader_election_master_status{name="rollwise"} 0.0' in body
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        reader.join(timeout=10)
        rest = "".join(lines.queue)  # what it printed on its way out: a stop before the caches synced is quiet
        assert "Traceback" not in rest and "never retrieved" not in rest, rest
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.mark.parametrize(("transport", "client"), [("direct", "RestClient"), ("aiohttp", "AsyncClient"),
                                                   ("httpx", "AsyncClient")])
def test_each_http_transport_picks_its_client_and_every_one_is_counted(transport: str, client: str) -> None:
    config = KubeConfig.from_dict({
        "current-context": "t", "clusters": [{"name": "t", "cluster": {"server": "http://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "t", "context": {"cluster": "t", "user": "u"}}]}).get()
    registry = CollectorRegistry()

    async def go() -> str:
        made = _client(ClientConfig(config), registry, transport)
        await made.close()
        return type(made).__name__

    assert asyncio.run(go()) == client
    assert "rest_client_requests" in {m.name for m in registry.collect()}


@pytest.mark.parametrize(("flags", "elect"), [([], True), (["--leader-elect"], True), (["--leader-elect=false"], False),
                                              (["--leader-elect", "true"], True)])
def test_leader_election_is_on_unless_turned_off(flags: list[str], elect: bool) -> None:
    parser = argparse.ArgumentParser()
    add_run(parser.add_subparsers())
    assert parser.parse_args(["run", *flags]).leader_elect is elect


@pytest.mark.parametrize(("value", "elect"), [("1", True), ("t", True), ("T", True), ("TRUE", True), ("True", True),
                                              ("0", False), ("f", False), ("F", False), ("FALSE", False),
                                              ("False", False)])
def test_leader_elect_takes_every_spelling_kube_controller_managers_flag_takes(value: str, elect: bool) -> None:
    # pflag's bool flag parses with Go's strconv.ParseBool; a manifest written for kube-controller-manager's
    # --leader-elect=0 means the same here.
    parser = argparse.ArgumentParser()
    add_run(parser.add_subparsers())
    assert parser.parse_args(["run", f"--leader-elect={value}"]).leader_elect is elect
