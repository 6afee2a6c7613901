"""``rollwise rollout promote [--full] TYPE/NAME``: move a canary past the step it holds at, or through all of them.

As ``kubectl argo rollouts promote`` (argo-rollouts ``pkg/kubectl-argo-rollouts/cmd/promote``), the write is to the
set's status through the status subresource, which the controller reads (controllers/statefulset/steps.py): Argo
clears the pause conditions its controller then steps past, or sets ``currentStepIndex`` one further where there is
none; rollwise's pauses are the step index itself, so promote always sets the index one further; ``--full`` sets
``promoteFull``, Argo's field. Not an annotation: where the rollout stands is status, written by whoever moves it,
and the spec (a GitOps tool's) stays as its owner wrote it. Unlike Argo's merge patch, the write carries the
resourceVersion it read: if the controller moved on meanwhile (a timed pause ended), the write is a Conflict and the
promote reads again, so it never skips a step nobody saw.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rollwise.api.errors import Conflict
from rollwise.api.steps import promoted_status, set_steps
from rollwise.cli.kubetarget import ClusterCommandError, SetTarget

__all__ = ["promote", "write_rollout_status"]

_ATTEMPTS = 5


async def promote(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    full = bool(getattr(args, "full", False))
    return await write_rollout_status(kube, ns, target, lambda sts: promoted_status(sts, full=full),
                                      lambda sts, status: f"promoted{_where(sts, status, full)}")


async def write_rollout_status(kube: Any, ns: str, target: SetTarget,
                               status_of: Callable[[dict[str, Any]], dict[str, Any]],
                               said: Callable[[dict[str, Any], dict[str, Any]], str]) -> int:
    """Write the status ``status_of`` makes of the set as read (promote, abort, retry: api/steps.py, api/abort.py),
    at the version read, reading again on a Conflict; its refusal (a ValueError) is the command's error."""
    for attempt in range(_ATTEMPTS):
        sts = await kube.get(target.kind, ns, target.name)
        try:
            status = status_of(sts)
        except ValueError as err:
            raise ClusterCommandError(f"{target.display}: {err}") from None
        try:
            await kube.update_status({**sts, "status": status})
        except Conflict:
            if attempt == _ATTEMPTS - 1:
                raise
            continue
        print(f"{target.display} {said(sts, status)}")
        return 0
    return 1


def _where(sts: dict[str, Any], status: dict[str, Any], full: bool) -> str:
    """Where the rollout now stands, in the condition's words (steps counted from 1)."""
    if full:
        return ": every remaining step skipped"
    count = len(set_steps(sts))
    index = int(status["currentStepIndex"])
    return f": now at step {index + 1} of {count}" if index < count else ": past the last step, the rest follows"
