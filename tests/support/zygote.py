"""``rollwise`` commands started for a test, forked from a process that has already imported them.

The end-to-end tests start about 150 ``rollwise up`` and ``rollwise run`` processes. Each spent most of its CPU
importing (aiohttp, cryptography, the controllers, the API server: about 0.8 CPU s of a typical test's 1.2), and on
the suite's two cores that import was a fifth of ``make test``. So each test worker keeps one server process
(``zygote_server``) that imports the commands once, and :func:`spawn` asks it to fork a child that runs
``rollwise.cli.main`` with the test's arguments, environment, directory and pipes, as ``python -m rollwise`` would.
What the test gets back behaves as the ``subprocess.Popen`` it had before: ``pid``, text ``stdout``/``stderr``,
``poll``, ``wait`` (with ``TimeoutExpired``), ``returncode``, signals.

``ROLLWISE_TEST_SPAWN=exec`` starts real ``python -m rollwise`` processes instead (and tests that are about the
process itself, such as ``test_kubectl``'s check of ``up``'s start-up output, ask for one with ``real_process``).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

__all__ = ["Process", "Spawned", "run", "spawn"]

PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL


class Process(Protocol):
    """What the tests use of a started command: ``subprocess.Popen[str]`` and :class:`Spawned` both are one."""

    @property
    def pid(self) -> int: ...
    @property
    def stdout(self) -> IO[str] | None: ...
    @property
    def stderr(self) -> IO[str] | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def send_signal(self, sig: int) -> None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...
    def communicate(self, timeout: float | None = None) -> tuple[str, str]: ...


class Spawned:
    """A forked ``rollwise`` command, with the parts of ``subprocess.Popen`` the tests use."""

    def __init__(self, pid: int, status: int, stdout: IO[str] | None, stderr: IO[str] | None,
                 args: Sequence[str]) -> None:
        self.pid, self.args = pid, list(args)
        self.stdout, self.stderr = stdout, stderr
        self.returncode: int | None = None
        self._status = status

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._status], [], [], 0)[0]:
            self._collect()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._status], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            self._collect()
        assert self.returncode is not None
        return self.returncode

    def _collect(self) -> None:
        data = os.read(self._status, 64)
        os.close(self._status)
        self.returncode = int(data) if data else -signal.SIGKILL  # no status: the server went first

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Both streams to their ends and the exit, each stream read on its own thread (as Popen does)."""
        out: dict[str, str] = {}
        readers = [threading.Thread(target=lambda n=n, s=s: out.__setitem__(n, s.read()), daemon=True)
                   for n, s in (("out", self.stdout), ("err", self.stderr)) if s is not None]
        for r in readers:
            r.start()
        end = None if timeout is None else time.monotonic() + timeout
        for r in readers:
            r.join(None if end is None else max(0.0, end - time.monotonic()))
        self.wait(None if end is None else max(0.0, end - time.monotonic()))
        return out.get("out", ""), out.get("err", "")


class _Server:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("zygote_server.py")),
                                      str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=DEVNULL)
        theirs.close()
        self.sock, self.lock = ours, threading.Lock()

    def fork(self, args: Sequence[str], env: Mapping[str, str], cwd: str, fds: list[int]) -> tuple[int, int]:
        with self.lock:
            socket.send_fds(self.sock, [json.dumps({"args": list(args), "env": dict(env), "cwd": cwd}).encode()],
                            fds)
            message, got, _, _ = socket.recv_fds(self.sock, 1 << 16, 1)
        if not message:
            raise RuntimeError(f"the zygote server stopped (exit {self.proc.poll()})")
        return json.loads(message)["pid"], got[0]

    def close(self) -> None:
        self.sock.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


_servers: list[_Server] = []  # this worker's one server, started on the first spawn
_server_lock = threading.Lock()


def _the_server() -> _Server:
    with _server_lock:
        if not _servers or _servers[-1].proc.poll() is not None:
            _servers.append(_Server())
            atexit.register(_servers[-1].close)
        return _servers[-1]


def spawn(args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
          stdout: int | None = PIPE, stderr: int | None = PIPE, real_process: bool = False) -> Process:
    """``rollwise ARGS`` as ``subprocess.Popen([sys.executable, "-m", "rollwise", *ARGS], ..., text=True)``.

    ``stdout``/``stderr``: ``PIPE``, ``DEVNULL`` or ``None`` (the test's own). Returns a :class:`Spawned`, or the
    real ``Popen`` with ``real_process`` or under ``ROLLWISE_TEST_SPAWN=exec``."""
    environment = dict(os.environ if env is None else env)
    if real_process or os.environ.get("ROLLWISE_TEST_SPAWN") == "exec":
        return subprocess.Popen([sys.executable, "-m", "rollwise", *args], env=environment, cwd=cwd,
                                stdin=DEVNULL, stdout=stdout, stderr=stderr, text=True)
    opened: list[int] = []
    theirs: list[int] = []
    ours: list[IO[str] | None] = []
    null = os.open(os.devnull, os.O_RDWR)
    opened.append(null)
    theirs.append(null)
    for choice, fd in ((stdout, 1), (stderr, 2)):
        if choice == PIPE:
            r, w = os.pipe()
            opened.append(w)
            theirs.append(w)
            ours.append(open(r, encoding="utf-8", errors="strict"))  # noqa: SIM115 - the caller reads and closes
        else:
            theirs.append(null if choice == DEVNULL else fd)
            ours.append(None)
    try:
        pid, status = _the_server().fork(args, environment, str(cwd or os.getcwd()), theirs)
    finally:
        for fd in opened:
            os.close(fd)
    return Spawned(pid, status, ours[0], ours[1], ["rollwise", *args])


def run(args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """``rollwise ARGS`` to its end, as ``subprocess.run([...], capture_output=True, text=True)`` returns it."""
    proc = spawn(args, env=env, cwd=cwd)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(["rollwise", *args], proc.wait(), out, err)
