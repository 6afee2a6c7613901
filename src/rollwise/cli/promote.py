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
from typing import Any

from rollwise.api.errors import Conflict
from rollwise.api.steps import NothingToPromote, promoted_status, steps_of
from rollwise.api.strategies import strategy_block
from rollwise.cli.kubetarget import ClusterCommandError, SetTarget

__all__ = ["promote"]

_ATTEMPTS = 5


async def promote(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    full = bool(getattr(args, "full", False))
    for attempt in range(_ATTEMPTS):
        sts = await kube.get(target.kind, ns, target.name)
        try:
            status = promoted_status(sts, full=full)
        except NothingToPromote as err:
            raise ClusterCommandError(f"{target.display}: {err}") from None
        try:
            await kube.update_status({**sts, "status": status})
        except Conflict:
            if attempt == _ATTEMPTS - 1:
                raise
            continue
        print(f"{target.display} promoted{_where(sts, status, full)}")
        return 0
    return 1


def _where(sts: dict[str, Any], status: dict[str, Any], full: bool) -> str:
    """Where the rollout now stands, in the condition's words (steps counted from 1)."""
    if full:
        return ": every remaining step skipped"
    count = len(steps_of(strategy_block(sts["spec"].get("updateStrategy") or {})))
    index = int(status["currentStepIndex"])
    return f": now at step {index + 1} of {count}" if index < count else ": past the last step, the rest follows"
