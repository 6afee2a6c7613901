"""Running ``rollwise up`` as a subprocess and the real kubectl against it (operator-plan.md §4).

The server binds a free port on 127.0.0.1 and is killed by its pid at the end of the session. kubectl gets a
fresh HOME and KUBECACHEDIR, so discovery, the OpenAPI cache and the version dispatcher's choice start cold.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import pytest
from api_reader import ApiReader
from zygote import Process, spawn

ROOT = Path(__file__).resolve().parents[2]
KUBECTL_132 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32"
DEADLINE = 60.0
POLL_FIRST, POLL_MOST = 0.05, 0.4
"""``until`` polls at once, then backs off to POLL_MOST: a predicate is often a kubectl run (~0.1 CPU s with the
server's share), and polling one every 50 ms for a rollout's duration kept a core busy waiting."""


def find_kubectl() -> str | None:
    if os.access(KUBECTL_132, os.X_OK):
        return KUBECTL_132
    return shutil.which("kubectl")


@dataclass
class Up:
    proc: Process
    url: str
    kubeconfig: Path
    env: dict[str, str]
    kubectl_path: str
    audit_log: Path
    output: list[str] = field(default_factory=list)
    _reader: ApiReader | None = None

    def read(self, *args: str) -> Any:
        """What ``kubectl get ARGS -o json`` prints (RESOURCE [NAME] [-n NS] [-l SEL] [-A]), read over the REST API:
        for polling (``api_reader``). ReadFailed where kubectl would exit non-zero."""
        if self._reader is None:
            self._reader = ApiReader(self.kubeconfig)
        return self._reader.get_args(*args)

    def kubectl(self, *args: str, check: bool = True, stdin: str | None = None,
                timeout: float = DEADLINE) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([self.kubectl_path, *args], env=self.env, capture_output=True, text=True,
                                input=stdin, timeout=timeout, check=False)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n"
                                 f"{result.stderr}")
        return result

    def install_crd(self) -> None:
        """The custom kind alone (``deploy/crds/crd.yaml``): ``up``'s own controllers then run its sets."""
        self.kubectl("apply", "-f", str(ROOT / "deploy" / "crds" / "crd.yaml"))

    def install_rollwise(self) -> None:
        """What docs/install.md says: the CRD from ``deploy/crds`` first, then the operator from ``deploy/``."""
        self.kubectl("apply", "-k", str(ROOT / "deploy" / "crds"))
        self.kubectl("apply", "-k", str(ROOT / "deploy"))

    def plugin(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``kubectl rollwise ARGS``: kubectl finds the plugin on PATH (see :func:`running_up_with_plugin`)."""
        return subprocess.run([self.kubectl_path, "rollwise", *args], env=self.env, capture_output=True, text=True,
                              timeout=DEADLINE * 2, check=False)

    def apply(self, manifest: str, *args: str) -> str:
        return self.kubectl("apply", "-f", "-", *args, stdin=manifest).stdout

    def watch(self, *args: str) -> Watch:
        return Watch(subprocess.Popen([self.kubectl_path, "get", "-w", *args], env=self.env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))

    def until(self, predicate: Callable[[], bool], what: str, deadline: float = DEADLINE,
              on_fail: Callable[[], str] | None = None, most: float = POLL_MOST) -> None:
        """``until`` below, for a test that holds a server."""
        until(predicate, what, deadline, on_fail, most)


class Watch:
    """``kubectl get -w`` in the background: lines as they come, always killed by pid."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._queue: Queue[str] = Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))

    def read_until(self, predicate: Callable[[list[str]], bool], deadline: float = DEADLINE) -> list[str]:
        end = time.monotonic() + deadline
        while not predicate(self.lines):
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError("kubectl get -w did not show it in time; lines:\n" + "\n".join(self.lines))
            try:
                self.lines.append(self._queue.get(timeout=min(left, 0.5)))
            except Empty:
                continue
        return self.lines

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def start_up(tmp: Path, kubectl_path: str, *extra: str, real_process: bool = False) -> Up:
    """``rollwise up`` on a free port, forked by ``zygote`` (or, with ``real_process``, as
    ``python -m rollwise up``), once it has printed its ``export KUBECONFIG=`` line."""
    kubeconfig = tmp / "kubeconfig"
    audit = tmp / "audit.jsonl"
    kubelet = tmp / "kubelet.yaml"
    kubelet.write_text('images: {"nginx:typo": {fail: ErrImagePull}}\n')
    args = ["up", "--port", "0", "--speed", "20", "--kubeconfig", str(kubeconfig), "--audit-log", str(audit),
            "--kubelet", str(kubelet), *extra]
    if "--data-dir" not in extra:
        args.append("--ephemeral")
    proc = spawn(args, real_process=real_process)
    assert proc.stdout is not None
    lines: list[str] = []
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("export KUBECONFIG="):
            break
    if not lines or not lines[-1].startswith("export KUBECONFIG="):
        stop_up(proc)
        raise AssertionError(f"rollwise up did not start: {lines}\n{proc.stderr.read() if proc.stderr else ''}")
    url = lines[0].rsplit(" ", 1)[-1]
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    env.update(KUBECONFIG=str(kubeconfig), KUBECACHEDIR=str(tmp / "cache"), HOME=str(home),
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return Up(proc=proc, url=url, kubeconfig=kubeconfig, env=env, kubectl_path=kubectl_path, audit_log=audit,
              output=lines)


def stop_up(proc: Process) -> int:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            return proc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
    return proc.wait()


@contextlib.contextmanager
def running_up(tmp: Path, *extra: str) -> Iterator[Up]:
    """``rollwise up`` for one test (skipped, saying why, where no kubectl is installed), stopped by pid after it."""
    kubectl = find_kubectl()
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    server = start_up(tmp, kubectl, *extra)
    try:
        yield server
    finally:
        stop_up(server.proc)


PLUGIN_DIR = Path(sys.executable).parent


def require_plugin() -> None:
    """Skip the test, saying why, where this venv's ``kubectl-rollwise`` entry point is not installed."""
    if not (PLUGIN_DIR / "kubectl-rollwise").exists():
        pytest.skip("the kubectl-rollwise entry point is not installed (run `make setup`)")


def put_plugin_on_path(server: Up) -> None:
    """This venv's ``kubectl-rollwise`` first on the PATH kubectl searches, as ``make install-plugin`` puts it."""
    server.env = {**server.env, "PATH": f"{PLUGIN_DIR}{os.pathsep}{server.env.get('PATH', os.environ['PATH'])}"}


@contextlib.contextmanager
def running_up_with_plugin(tmp: Path, *extra: str) -> Iterator[Up]:
    """:func:`running_up` with :func:`put_plugin_on_path` (skipped, saying why, where the plugin is missing)."""
    require_plugin()
    with running_up(tmp, *extra) as server:
        put_plugin_on_path(server)
        yield server


def namespace(up: Up, name: str) -> None:
    # `kubectl create namespace` sends protobuf; `create -f` sends JSON (operator-plan.md §4).
    up.kubectl("create", "-f", "-", stdin=f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n")


def statefulset(name: str, *, image: str = "nginx:1.26", replicas: int = 3, strategy: str = "",
                claims: bool = True) -> str:
    claim_block = """
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}""" if claims else ""
    strategy_block = f"\n  updateStrategy: {strategy}" if strategy else ""
    return f"""apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}
spec:
  serviceName: {name}
  replicas: {replicas}{strategy_block}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: app
        image: {image}
        ports: [{{containerPort: 80, name: http}}]{claim_block}
"""


HOOK = "example.com/drain"  # the pre-delete hook label an application's drain agent removes


def hooked_set(*, timeout: int | None = None, strategy: str = "") -> str:
    """The custom set ``web`` (3 replicas, nginx:1.27) whose pods carry the pre-delete hook ``HOOK: pending``
    (``spec.lifecycle.preDelete.labelsHandler``, with ``timeoutSeconds`` when given)."""
    extra = f", timeoutSeconds: {timeout}" if timeout else ""
    strategy_line = f"\n  updateStrategy: {strategy}" if strategy else ""
    return f"""\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {{name: web, namespace: default}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: web}}}}{strategy_line}
  lifecycle: {{preDelete: {{labelsHandler: {{{HOOK}: pending}}{extra}}}}}
  template:
    metadata: {{labels: {{app: web, {HOOK}: pending}}}}
    spec: {{terminationGracePeriodSeconds: 1, containers: [{{name: app, image: "nginx:1.27"}}]}}
"""


def until(predicate: Callable[[], bool], what: str, deadline: float = DEADLINE,
          on_fail: Callable[[], str] | None = None, most: float = POLL_MOST) -> None:
    """Poll ``predicate``, backing off from POLL_FIRST to ``most`` seconds between polls (``most=POLL_FIRST``
    where the instant matters: a replay whose next step must come when the last one was met)."""
    end = time.monotonic() + deadline
    pause = POLL_FIRST
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(pause)
        pause = min(pause * 1.5, most)
    raise AssertionError(f"not within {deadline} s: {what}" + (f"; seen:\n{on_fail()}" if on_fail else ""))
