"""The process that ``zygote.spawn`` forks ``rollwise`` commands from (see ``zygote``'s docs).

It imports the commands once, then waits on the socket it was started with. Each request carries a command line,
an environment, a working directory and three descriptors (the child's stdin, stdout and stderr); the child is
forked, made to look like a fresh ``python -m rollwise ...`` (descriptors, environment, directory, signal handlers,
random state) and runs ``rollwise.cli.main``. The reply carries the child's pid and the read end of a pipe on which
its exit status (as ``Popen.returncode`` counts it) is written once the child is reaped. The server is single-
threaded, so a fork never copies a lock another thread holds; it ends when the socket closes (its worker ended).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import random
import selectors
import signal
import socket
import sys
from typing import Any

PRELOAD = ("rollwise.cli", "rollwise.cli.up", "rollwise.cli.run", "rollwise.cli.rollout", "rollwise.cli.get",
           "rollwise.cli.migrate", "rollwise.cli.dashboard", "rollwise.cli.simulate", "rollwise.cli.client_metrics",
           "rollwise.cluster.client.kube", "rollwise.cluster.client.rest", "rollwise.operator.probes",
           "rollwise.runtime.trace", "rollwise.runtime.metrics", "lightkube", "lightkube.config.kubeconfig",
           "lightkube.config.client_adapter")
"""What the suite's commands import before they do anything: the server, the operator and the client commands."""


def main() -> None:
    import importlib

    for module in PRELOAD:
        importlib.import_module(module)
    control = socket.socket(fileno=int(sys.argv[1]))
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that the wake-up descriptor hears of it
    statuses: dict[int, int] = {}  # child pid -> the write end of its status pipe
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is control:
                message, fds, _, _ = socket.recv_fds(control, 1 << 16, 3)
                if not message:
                    return
                request = json.loads(message)
                status_r, status_w = os.pipe()
                pid = os.fork()
                if pid == 0:
                    os.close(status_r)
                    os.close(status_w)
                    _child(request, fds, closing=[control.fileno(), wake_r, wake_w, *statuses.values()])
                for fd in fds:
                    os.close(fd)
                statuses[pid] = status_w
                socket.send_fds(control, [json.dumps({"pid": pid}).encode()], [status_r])
                os.close(status_r)
            else:
                os.read(wake_r, 4096)
                _reap(statuses)


def _reap(statuses: dict[int, int]) -> None:
    while statuses:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        write = statuses.pop(pid, None)
        if write is not None:
            os.write(write, str(os.waitstatus_to_exitcode(status)).encode())
            os.close(write)


def _child(request: dict[str, Any], fds: list[int], *, closing: list[int]) -> None:
    """Become ``python -m rollwise ARGS`` and never return."""
    code: Any = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in closing:
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        random.seed()  # the fork copied the server's random state: each child draws its own, as a new process does
        sys.argv = ["rollwise", *request["args"]]
        from rollwise.cli import main as rollwise_main

        code = rollwise_main(request["args"])
    except SystemExit as stop:
        code = stop.code
        if isinstance(code, str):  # sys.exit("message"): printed, exit 1, as the interpreter does
            print(code, file=sys.stderr)
            code = 1
    except BaseException:  # as the interpreter would: the traceback on stderr, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
