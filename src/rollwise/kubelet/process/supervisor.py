"""Every process the runtime starts, tracked by pid and stopped with its owner.

Each process runs in a session of its own (``start_new_session``), so a signal to its process group reaches
anything it forks and a Ctrl-C in the terminal does not hit it before we decide to stop it. ``stop_all`` runs at
interpreter exit (``atexit``) and on SIGTERM/SIGHUP (the previous handler is then called), so nothing outlives the
supervisor's owner. Only pids this supervisor started are ever signalled.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["Supervisor"]

_LIVE: weakref.WeakSet[Supervisor] = weakref.WeakSet()
_HOOKED = False
_HOOK_LOCK = threading.Lock()


def _stop_everything() -> None:
    for sup in list(_LIVE):
        sup.stop_all()


def _install_hooks() -> None:
    """Once per interpreter: atexit, and SIGTERM/SIGHUP handlers that stop our processes, then chain."""
    global _HOOKED  # noqa: PLW0603 - one process-wide hook, installed lazily
    with _HOOK_LOCK:
        if _HOOKED:
            return
        _HOOKED = True
    atexit.register(_stop_everything)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; atexit still covers a normal exit
    for signum in (signal.SIGTERM, signal.SIGHUP):
        previous = signal.getsignal(signum)

        def handler(num: int, frame: FrameType | None, previous: Any = previous) -> None:
            _stop_everything()
            if callable(previous):
                previous(num, frame)
            else:
                signal.signal(num, signal.SIG_DFL)
                os.kill(os.getpid(), num)

        signal.signal(signum, handler)


class Supervisor:
    """Starts processes and remembers them until they are reaped."""

    def __init__(self) -> None:
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self.started: list[int] = []  # every pid ever started, for owners that check nothing outlived them
        self._lock = threading.Lock()
        _install_hooks()
        _LIVE.add(self)

    def start(self, argv: Sequence[str], *, log: Path) -> subprocess.Popen[bytes]:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        with self._lock:
            self._procs[proc.pid] = proc
            self.started.append(proc.pid)
        return proc

    def signal(self, pid: int, signum: int) -> None:
        """Signal the process group of a process we started (a no-op once it is reaped)."""
        with self._lock:
            proc = self._procs.get(pid)
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signum)  # its own session: pgid == pid

    def exit_code(self, pid: int) -> int | None:
        """None while it runs; its exit code (negative: killed by that signal) once it ended. Reaps it."""
        with self._lock:
            proc = self._procs.get(pid)
        if proc is None:
            return None
        return proc.poll()

    def forget(self, pid: int) -> None:
        with self._lock:
            proc = self._procs.get(pid)
            if proc is not None and proc.poll() is not None:
                del self._procs[pid]

    def pids(self) -> list[int]:
        with self._lock:
            return [pid for pid, p in self._procs.items() if p.poll() is None]

    def stop_all(self, *, grace: float = 2.0) -> None:
        """SIGTERM every live process group, wait up to ``grace`` seconds, then SIGKILL what is left; reap all."""
        with self._lock:
            procs = list(self._procs.values())
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        with self._lock:
            for p in procs:
                self._procs.pop(p.pid, None)
