"""``rollwise get sts/NAME [--watch]`` and ``rollwise status sts/NAME [--timeout 5m]``: a set's rollout as the
on-call engineer thinks of it, ordinal by ordinal, and the exit code a pipeline step needs.

Both follow the set through watches (``follow.py``), draw the one projection (``rollwise.projection``) and trust
the controllers: ``status`` is done when the rollout is complete by the shared rule or the controller's condition
says so, and failed as soon as the ``Progressing`` condition holds a failing reason (the one table,
``api/reasons.py``). Also as ``kubectl rollwise status`` and ``kubectl rollwise get`` through the
``kubectl-rollwise`` plugin.

Exit codes tell apart what a pipeline does next (Argo Rollouts' ``status`` and ``kubectl rollout status`` exit 1
for all of them): 0 shown / complete; 1 the rollout failed; 2 invalid arguments; 3 ``--timeout`` passed; 4 the set
could not be asked about: not found, deleted while followed (``get --watch`` too), the API server unreachable,
refusing or no longer answering when ``--timeout`` passes, or a kubeconfig that cannot be used.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from rich.console import Console
from rich.live import Live

from rollwise.api.reasons import FAILING_REASONS
from rollwise.cli.follow import Follower
from rollwise.cli.kubetarget import ClusterCommandError, SetTarget, add_connection_flags, parse_target, run_on_cluster
from rollwise.cli.rollout import duration
from rollwise.cli.treeview import print_view, render_view, status_line, view_console
from rollwise.projection import RolloutView

__all__ = ["EXIT_COULD_NOT_ASK", "EXIT_FAILED", "EXIT_TIMED_OUT", "add_get", "add_status"]

EXIT_FAILED = 1
EXIT_TIMED_OUT = 3
EXIT_COULD_NOT_ASK = 4

_TICK_SECONDS = 1.0
"""How often a view is projected again without a change: ages grow and minReadySeconds pass on the local clock.
It reads nothing from the API."""
async def _start(kube: Any, ns: str, target: SetTarget) -> tuple[Follower, RolloutView]:
    follower = Follower(kube, ns, [target.kind])
    await follower.start()
    view = follower.view(target.kind, ns, target.name, time.time())
    if view is None:
        await follower.stop()
        raise ClusterCommandError(f'statefulsets.{target.kind.group} "{target.name}" not found in namespace "{ns}"')
    return follower, view


async def _get(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    follower, view = await _start(kube, ns, target)
    console = view_console()
    try:
        if not args.watch:
            print_view(console, render_view(view))
            return 0
        if not console.is_terminal:
            return await _print_frames(follower, target, ns, console)
        # A frame taller than the terminal is cut at its bottom (the events) with an ellipsis: one that scrolled
        # could no longer be redrawn in place, and would leave its top lines behind on the screen.
        with Live(render_view(view), console=console, auto_refresh=False, transient=False,
                  vertical_overflow="ellipsis") as live:
            while True:
                await follower.changed(_TICK_SECONDS)
                current = follower.view(target.kind, ns, target.name, time.time())
                if current is None:
                    break
                live.update(render_view(current), refresh=True)
        return _gone(target, ns)
    finally:
        await follower.stop()


async def _print_frames(follower: Follower, target: SetTarget, ns: str, console: Console) -> int:
    """``--watch`` into a pipe: each changed picture once, one after another (nothing to redraw in place)."""
    last = ""
    while True:
        view = follower.view(target.kind, ns, target.name, time.time())
        if view is None:
            return _gone(target, ns)
        with console.capture() as cap:
            console.print(render_view(view, events=0))
        frame = cap.get()
        if frame != last:
            print_view(console, render_view(view))
            console.print("")
            last = frame
        await follower.changed(None)


def _gone(target: SetTarget, ns: str) -> int:
    """The set was deleted while followed: said on stdout after the last picture (what a watcher reads) and on
    stderr (what a script reads), exit 4."""
    line = f'{target.display} was deleted from namespace "{ns}" while it was followed'
    print(line, flush=True)
    print(f"error: {line}", file=sys.stderr)
    return EXIT_COULD_NOT_ASK


async def _status(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    follower, view = await _start(kube, ns, target)
    deadline = time.monotonic() + args.timeout if args.timeout > 0 else None
    last = ""
    try:
        while True:
            line = status_line(view)
            if line != last:
                print(line, flush=True)
                last = line
            if view.done:
                return 0
            if view.failed:
                print(f"error: {target.display} rollout failed{_at(view)}: {view.message}", file=sys.stderr)
                return EXIT_FAILED
            if not args.watch:
                return 0
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                if follower.unreachable is not None:  # not a slow rollout: nothing could be asked
                    print(f"error: {target.display}: the API server stopped answering: {follower.unreachable}",
                          file=sys.stderr)
                    return EXIT_COULD_NOT_ASK
                print(f"error: timed out after {args.timeout:g}s waiting for {target.display}{_at(view)}: "
                      f"{view.message}", file=sys.stderr)
                return EXIT_TIMED_OUT
            await follower.changed(_TICK_SECONDS if left is None else min(left, _TICK_SECONDS))
            current = follower.view(target.kind, ns, target.name, time.time())
            if current is None:
                print(f"error: {target.display} was deleted while its rollout was followed", file=sys.stderr)
                return EXIT_COULD_NOT_ASK
            view = current
    finally:
        await follower.stop()


def _at(view: RolloutView) -> str:
    return f" at pod {view.waiting_on}" if view.waiting_on else ""


def _runner(action: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            target = parse_target(args.target)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        return run_on_cluster(args, lambda kube, ns: action(kube, ns, target, args), could_not_ask=EXIT_COULD_NOT_ASK)

    return run


def _bool(text: str) -> bool:
    return text.lower() in ("true", "1", "yes")


def add_get(sub: Any) -> None:
    text = ("a set's rollout ordinal by ordinal: revision, role, readiness and why it waits (--watch: live, "
            "redrawn in place)")
    p = sub.add_parser("get", help=text, description=text.capitalize() + ". Icons as Argo Rollouts': ✔ available "
                       "or complete, ✖ failed, ⚠ needs a look, ◌ moving, ◷ waiting to start, ॥ held.")
    p.add_argument("target", metavar="TYPE/NAME", help="rsts/NAME (apps.rollwise.dev) or sts/NAME (apps/v1)")
    add_connection_flags(p)
    p.add_argument("-w", "--watch", action="store_true",
                   help="follow changes until interrupted (Ctrl-C), or until the set is deleted (exit 4)")
    p.set_defaults(run=_runner(_get))


def add_status(sub: Any) -> None:
    text = ("follow a set's rollout; exit 0 when complete, 1 when it fails, 3 when --timeout passes, 4 when the set "
            "cannot be asked about (not found, deleted, the API unreachable or refusing), naming the pod and why")
    p = sub.add_parser("status", help=text, description=text.capitalize() + ". A rollout held at its partition is "
                       "complete; it fails on any Progressing=False reason of: " + ", ".join(FAILING_REASONS)
                       + ". Also as `kubectl rollwise status`.")
    p.add_argument("target", metavar="TYPE/NAME", help="rsts/NAME (apps.rollwise.dev) or sts/NAME (apps/v1)")
    add_connection_flags(p)
    p.add_argument("--timeout", type=duration, default=0.0,
                   help="give up after this long, exit 3 (e.g. 30s, 5m; default 0: wait for ever)")
    p.add_argument("-w", "--watch", type=_bool, default=True, metavar="BOOL",
                   help="keep following until done (default true); false: print the state once, exit 1 only if "
                        "failed")
    p.set_defaults(run=_runner(_status))
