"""``rollwise rollout status|history|undo|restart|pause|resume|promote|abort|retry rsts/NAME``: kubectl's rollout
commands for the custom kind (promote, abort and retry: Argo Rollouts' canary commands, cli/promote.py, cli/abort.py).

``kubectl rollout`` never works on custom kinds: its status viewer, history viewer and rollbacker match only the
built-in group-kinds (kubectl ``pkg/polymorphichelpers/rollout_status.go``, ``history.go``, ``rollback.go``;
operator-plan §2). These follow kubectl's StatefulSet implementations, message for message, and work on plain
``sts/NAME`` too. Installed also as ``kubectl-rollwise``, so ``kubectl rollwise rollout status rsts/web`` works
with the plugin on PATH.

``pause`` and ``resume`` set ``spec.paused`` (Deployment's field, on both kinds here: on apps/v1 a lab proposal that
``rollwise up --proposals on`` keeps), as ``kubectl rollout pause|resume`` does for Deployments, with its messages.

``status`` stops with an error once the ``Progressing`` condition holds a failing reason (``api/reasons.py``), as
kubectl's Deployment viewer stops on ``ProgressDeadlineExceeded``; ``rollwise status`` tells the outcomes apart.

Exit codes: 0 done; 1 an API error, a failed rollout or a timeout (``status``), or nothing to roll back to; 2
invalid arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

import yaml

from rollwise.api.conditions import condition_of
from rollwise.api.meta import Obj, controller_of, uid_of
from rollwise.api.reasons import failing_reason
from rollwise.api.revisions import revision_number, template_of
from rollwise.api.rollout import status_progress
from rollwise.api.strategies import ON_DELETE, declared_type
from rollwise.cli.abort import abort, retry
from rollwise.cli.durations import seconds
from rollwise.cli.kubetarget import ClusterCommandError, SetTarget, add_connection_flags, parse_target, run_on_cluster
from rollwise.cli.promote import promote
from rollwise.cluster.quorum_status import quorum_status_of
from rollwise.cluster.resources import CONTROLLER_REVISION
from rollwise.cluster.wire import format_time
from rollwise.controllers.quorum import ALL_MEMBERS_UPDATED
from rollwise.controllers.quorum.settings import handed_to_quorum
from rollwise.controllers.statefulset.readiness import READY, is_custom_kind

__all__ = ["add_rollout", "duration", "kubectl_plugin", "status_message"]

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
CHANGE_CAUSE = "kubernetes.io/change-cause"
_POLL_SECONDS = 0.5


class RolloutError(ClusterCommandError):
    """Refused or failed: the message is printed as kubectl prints its errors, exit 1."""


def status_message(sts: Obj) -> tuple[str, bool]:
    """kubectl's ``StatefulSetStatusViewer.Status`` lines, and whether the rollout is done.

    Done is the one rollout-complete rule (``api/rollout.py``): the set's own ``Ready`` condition where it has one
    for its latest generation (the custom kind; what ``kubectl wait --for=condition=Ready`` waits for), else the
    same rule read from the counters. So it agrees with ``kubectl wait`` for every strategy, a set held at its
    partition (``PartitionRolledOut``) and OnDelete included. kubectl refuses OnDelete; here an OnDelete set is
    followed until its pods have been deleted and recreated, and a quorum-aware one (DEP-07) until the quorum-aware
    controller has replaced every member, its wait quoted from ``AllMembersUpdated``.
    """
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    strategy = spec.get("updateStrategy") or {}
    on_delete = declared_type(strategy) == ON_DELETE
    quorum = handed_to_quorum(sts)
    progress = status_progress(sts)
    ready = _ready_condition(sts)
    done = progress.done if ready is None else ready.get("status") == "True"
    generation = int((sts.get("metadata") or {}).get("generation") or 0)
    observed = int(status.get("observedGeneration") or 0)
    if not done and (observed == 0 or generation > observed):
        return "Waiting for statefulset spec update to be observed...", False
    replicas, updated, floor = progress.replicas, progress.updated, progress.floor
    revision = status.get("updateRevision")
    if done:
        if quorum:
            return f"quorum-aware roll out complete: {updated} members at revision {revision}...", True
        if floor > 0 and updated < replicas:
            return f"partitioned roll out complete: {updated} new pods have been updated...", True
        return f"statefulset rolling update complete {updated} pods at revision {revision}...", True
    if quorum:
        waiting = _quorum_wait(sts)
        return (f"Waiting for quorum-aware roll out to finish: {updated} of {replicas} members at revision "
                f"{revision}" + (f": {waiting}" if waiting else "") + "..."), False
    ready_count = int(status.get("readyReplicas") or 0)
    if ready_count < replicas:
        return f"Waiting for {replicas - ready_count} pods to be ready...", False
    available = int(status.get("availableReplicas") or 0)
    if available < replicas:
        return f"Waiting for {replicas - available} pods to be available...", False
    if floor > 0:
        return (f"Waiting for partitioned roll out to finish: {updated} out of {replicas - floor} new pods "
                f"have been updated..."), False
    if on_delete:
        return (f"Waiting for {replicas - updated} pods to be deleted and recreated at revision {revision} "
                "(OnDelete replaces a pod only when it is deleted)..."), False
    return f"waiting for statefulset rolling update to complete {updated} pods at revision {revision}...", False


def _ready_condition(sts: Obj) -> Obj | None:
    """The custom kind's Ready condition when it speaks of the set's latest generation (as ``kubectl wait``
    reads it), else None."""
    if not is_custom_kind(sts):
        return None
    generation = (sts.get("metadata") or {}).get("generation")
    found = condition_of((sts.get("status") or {}).get("conditions") or [], READY)
    if found is None or found.get("observedGeneration") != generation:
        return None
    return found


def _quorum_wait(sts: Obj) -> str:
    """What the quorum-aware controller waits for: its AllMembersUpdated message, from the status (where it shares
    it) or from the companion's annotation on an apps/v1 set, when it speaks of the current revision."""
    status = sts.get("status") or {}
    found = condition_of(status.get("conditions") or [], ALL_MEMBERS_UPDATED)
    if found is None:
        state = quorum_status_of(sts, types=(ALL_MEMBERS_UPDATED,))
        if state.update_revision not in (None, status.get("updateRevision")):
            return ""
        found = next(iter(state.conditions), None)
    return "" if found is None or found.get("status") == "True" else str(found.get("message") or "")


async def _status(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    deadline = time.monotonic() + args.timeout if args.timeout > 0 else None
    last = None
    while True:
        sts = await kube.get(target.kind, ns, target.name)
        message, done = status_message(sts)
        if message != last:
            print(message, flush=True)
            last = message
        conditions = (sts.get("status") or {}).get("conditions") or []
        failing = None if done else failing_reason(conditions)
        if failing is not None:
            said = (condition_of(conditions, "Progressing") or {}).get("message")
            raise RolloutError(f'statefulset "{target.name}" rollout failed: {failing}: {said}')
        if done or not args.watch:
            return 0
        if deadline is not None and time.monotonic() >= deadline:
            print("error: timed out waiting for the condition", file=sys.stderr)
            return 1
        await asyncio.sleep(_POLL_SECONDS)


async def _history_of(kube: Any, ns: str, sts: Obj) -> list[Obj]:
    revisions, _ = await kube.list(CONTROLLER_REVISION, ns)
    owned = [r for r in revisions if (ref := controller_of(r)) is not None and ref.get("uid") == uid_of(sts)]
    return sorted(owned, key=revision_number)


def _numbered(history: list[Obj], number: int) -> Obj | None:
    """The revision of that ``.revision`` number (kubectl's ``--revision`` and ``--to-revision``), if kept."""
    return next((r for r in history if revision_number(r) == number), None)


async def _history(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    sts = await kube.get(target.kind, ns, target.name)
    history = await _history_of(kube, ns, sts)
    if args.revision:
        chosen = _numbered(history, args.revision)
        if chosen is None:
            raise RolloutError(f"unable to find the specified revision {args.revision}")
        print(f"{target.display} with revision #{args.revision}")
        print("Pod Template:")
        print("  " + yaml.safe_dump(template_of(chosen), sort_keys=True).rstrip().replace("\n", "\n  "))
        return 0
    print(target.display)
    print("REVISION  CHANGE-CAUSE")
    for rev in history:
        cause = ((rev.get("metadata") or {}).get("annotations") or {}).get(CHANGE_CAUSE) or "<none>"
        print(f"{revision_number(rev):<9} {cause}")
    print()
    return 0


async def _undo(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    """kubectl's ``StatefulSetRollbacker``: the template of ``--to-revision`` (default: the one before the
    newest) replaces the set's template, written with the resourceVersion it was read at."""
    sts = await kube.get(target.kind, ns, target.name)
    history = await _history_of(kube, ns, sts)
    if args.to_revision:
        found = _numbered(history, args.to_revision)
        if found is None:
            raise RolloutError(f"unable to find specified revision {args.to_revision} in history")
        to = found
    elif len(history) < 2:
        raise RolloutError("no last revision to roll back to")
    else:
        to = history[-2]
    template = template_of(to)
    if template == sts["spec"]["template"]:
        print(f"{target.display} skipped rollback (current template already matches revision "
              f"{revision_number(to)})")
        return 0
    await kube.update({**sts, "spec": {**sts["spec"], "template": template}})
    print(f"{target.display} rolled back")
    return 0


async def _restart(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    """kubectl's ``defaultObjectRestarter``: a new template annotation, so the controller rolls every pod."""
    stamp = format_time(time.time())
    await kube.patch(target.kind, ns, target.name,
                     {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: stamp}}}}})
    print(f"{target.display} restarted")
    return 0


async def _pause(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    """kubectl's ``defaultObjectPauser`` / ``defaultObjectResumer``: refused when already in the state asked for."""
    want = args.action == "pause"
    sts = await kube.get(target.kind, ns, target.name)
    if bool((sts.get("spec") or {}).get("paused")) == want:
        raise RolloutError(f"{target.display} is {'already' if want else 'not'} paused")
    await kube.patch(target.kind, ns, target.name, {"spec": {"paused": True if want else None}})
    print(f"{target.display} {'paused' if want else 'resumed'}")
    return 0


_ACTIONS = {"status": _status, "history": _history, "undo": _undo, "restart": _restart, "pause": _pause,
            "resume": _pause, "promote": promote, "abort": abort, "retry": retry}


def duration(text: str) -> float:
    """A ``--timeout`` (``cli/durations.py``); 0 is no limit."""
    value = seconds(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a duration such as 30s, 5m or 0 (no limit)")
    return value


def _run(args: argparse.Namespace) -> int:
    try:
        target = parse_target(args.target)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return run_on_cluster(args, lambda kube, ns: _ACTIONS[args.action](kube, ns, target, args))


def add_rollout(sub: Any) -> None:
    p = sub.add_parser("rollout", help="status, history, undo, restart, pause and resume of a set's rollout "
                                       "on a cluster "
                                       "(kubectl rollout, for rsts/NAME too)",
                       description="kubectl's rollout commands for rollwise's custom kind (rsts/NAME) and plain "
                                   "sets (sts/NAME). Also installed as the kubectl plugin `kubectl-rollwise`.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, text in (("status", "watch the rollout until it is done"),
                       ("history", "the set's revisions (ControllerRevisions)"),
                       ("undo", "roll back to the previous revision, or --to-revision"),
                       ("restart", "roll every pod, through the template annotation kubectl.kubernetes.io/"
                                   "restartedAt"),
                       ("pause", "stop starting new rollout steps (spec.paused: true); scaling and repairs go on"),
                       ("resume", "resume a paused rollout (spec.paused unset); the progress deadline starts "
                                  "afresh"),
                       ("promote", "move a canary past the step it holds at (rollingUpdate.steps); --full: past "
                                   "all of them"),
                       ("abort", "stop a rollout: every pod at the update revision returns to the stable revision "
                                 "(status.abort); the spec keeps its template"),
                       ("retry", "start an aborted rollout again from its first step")):
        a = actions.add_parser(name, help=text, description=text)
        a.add_argument("target", metavar="TYPE/NAME", help="rsts/NAME (apps.rollwise.dev) or sts/NAME (apps/v1)")
        add_connection_flags(a)
        if name == "status":
            a.add_argument("--timeout", type=duration, default=0.0,
                           help="give up after this long, exit 1 (e.g. 30s, 5m; default 0: wait for ever)")
            a.add_argument("-w", "--watch", type=lambda s: s.lower() in ("true", "1", "yes"), default=True,
                           metavar="BOOL", help="keep watching until done (default true); false: print once")
        if name == "history":
            a.add_argument("--revision", type=int, default=0, help="show the pod template of this revision")
        if name == "promote":
            a.add_argument("--full", action="store_true", help="skip every remaining step: update the rest now")
        if name == "undo":
            a.add_argument("--to-revision", type=int, default=0, help="the revision to roll back to (default: "
                                                                       "the previous one)")
        a.set_defaults(run=_run)


def kubectl_plugin() -> int:
    """``kubectl-rollwise``: kubectl runs it with the words after ``kubectl rollwise``."""
    from rollwise.cli import main  # noqa: PLC0415 - the package imports this module

    return main(sys.argv[1:])
