"""``rollwise rollout abort|retry TYPE/NAME``: stop a rollout and take its pods back to the stable revision, or
start it again from its first step.

As ``kubectl argo rollouts abort`` and ``retry`` (argo-rollouts ``pkg/kubectl-argo-rollouts/cmd/abort``,
``cmd/retry``), the write is to the set's status through the status subresource (``status.abort``; api/abort.py),
which the controller reads (controllers/statefulset/abort.py); the spec keeps its template. As ``promote``, the
write carries the resourceVersion it read and reads again on a Conflict (cli/promote.py), so the abort names the
update revision the status held when it was written.
"""

from __future__ import annotations

import argparse
from typing import Any

from rollwise.api.abort import aborted_status, retried_status
from rollwise.cli.kubetarget import SetTarget
from rollwise.cli.promote import write_rollout_status

__all__ = ["abort", "retry"]


async def abort(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    return await write_rollout_status(
        kube, ns, target, aborted_status,
        lambda sts, status: f"aborted: its pods return to the stable revision {status.get('currentRevision')}")


async def retry(kube: Any, ns: str, target: SetTarget, args: argparse.Namespace) -> int:
    return await write_rollout_status(kube, ns, target, retried_status,
                                      lambda sts, status: "retried: the rollout starts again at step 1")
