"""An aborted rollout (api/abort.py): the stable revision is the revision every pod should run, so the rolling
update's own rules take each pod at the aborted revision back, and the ``Progressing`` condition says so.

Argo Rollouts (``rollout/canary.go``, ``rollout/sync.go``): an aborted rollout scales the canary to zero and is
Degraded with reason ``RolloutAborted`` until ``retry`` or a new template. Here the condition is ``Progressing=False``
(a failing reason, api/reasons.py: ``rollwise status`` exits 1), and its message holds no count or clock, so a
reconcile of the aborted, settled set computes the same status and writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.abort import KEPT_WHILE_ABORTED, ROLLOUT_ABORTED, Abort
from rollwise.api.meta import Obj
from rollwise.controllers.statefulset.context import Sync

__all__ = ["abort_fields", "with_abort_condition"]


def abort_fields(abort: Abort, status: Obj, old_status: Mapping[str, Any]) -> Obj:
    """The abort kept in the status the controller writes (it computes the rest afresh), the stable revision, and
    what ``retry`` and the display read of the rollout that was aborted (the attempt, the run that failed)."""
    kept = {k: old_status[k] for k in KEPT_WHILE_ABORTED if k in old_status and k not in status}
    return {**kept, **abort.fields(), "stableRevision": status["currentRevision"]}


def with_abort_condition(sync: Sync, abort: Abort | None, wanted: list[Obj]) -> list[Obj]:
    """``Progressing=False``, ``RolloutAborted``, and a Warning event the first time the condition says it."""
    if abort is None:
        return wanted
    message = (f"rollout to revision {abort.revision} {abort.message}: every pod returns to the stable revision "
               f"{sync.current_name}")
    if sync.old_condition_reason("Progressing") != ROLLOUT_ABORTED:
        sync.event(ROLLOUT_ABORTED, message, warning=True)
    return [{**c, "status": "False", "reason": ROLLOUT_ABORTED, "message": message}
            if c.get("type") == "Progressing" else c for c in wanted]
