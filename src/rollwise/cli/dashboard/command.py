"""``rollwise dashboard [--port 7424]``: serve the dashboard on 127.0.0.1 with the user's kubeconfig until
interrupted (like ``kubectl argo rollouts dashboard``). It only reads: lists and watches, never a write.

Exit codes: 0 stopped by Ctrl-C; 1 an unusable kubeconfig, an API error or a port in use; 2 invalid arguments.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from aiohttp import web

from rollwise.cli.dashboard.app import make_app
from rollwise.cli.dashboard.board import Board
from rollwise.cli.follow import Follower
from rollwise.cli.kubetarget import add_connection_flags, run_on_cluster
from rollwise.cluster.resources import STATEFULSET_KINDS

__all__ = ["add_dashboard"]

HOST = "127.0.0.1"
"""Loopback only, by design: the page shows what the user's kubeconfig may read, to whoever reaches it."""

DEFAULT_PORT = 7424
"""A port no tool a user runs beside this one takes by default: not Argo Rollouts' dashboard nor Loki (3100),
Grafana (3000), ``kubectl proxy`` (8001), a port-forwarded Argo CD (8080), Prometheus (9090), nor rollwise's own
``up`` (6443) and operator ports (8080, 8081). tests/cli/test_dashboard_command.py holds the list it is checked
against."""


async def _serve(kube: Any, args: argparse.Namespace) -> int:
    follower = Follower(kube, args.namespace, STATEFULSET_KINDS)
    await follower.start()
    board = Board(follower)
    board.refresh()
    runner = web.AppRunner(make_app(board), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, HOST, args.port)
        try:
            await site.start()
        except OSError as err:
            print(f"error: cannot listen on {HOST}:{args.port}: {err.strerror or err}", file=sys.stderr)
            return 1
        port = runner.addresses[0][1]
        where = f"namespace {args.namespace}" if args.namespace else "all namespaces"
        print(f"rollwise dashboard: http://{HOST}:{port}/ ({where}; Ctrl-C to stop)", flush=True)
        await board.run()
        return 0
    finally:
        await runner.cleanup()
        await follower.stop()


def _run(args: argparse.Namespace) -> int:
    with contextlib.suppress(KeyboardInterrupt):
        return run_on_cluster(args, lambda kube, _ns: _serve(kube, args))
    return 0


def add_dashboard(sub: Any) -> None:
    text = "a local read-only web page of every set's rollout, live (127.0.0.1, your kubeconfig)"
    p = sub.add_parser("dashboard", help=text, description=text.capitalize() + ". `/` lists the sets of both "
                       "kinds; `/sets/NAMESPACE/NAME` shows one set's ordinals, conditions, events and timeline.")
    add_connection_flags(p)
    p.add_argument("--port", type=_port, default=DEFAULT_PORT,
                   help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free port)")
    p.set_defaults(run=_run)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a port number from 0 to 65535")
    return value
