"""What the custom kind's status adds for Kubernetes tooling (operator-plan §2, "Status"):

* ``status.labelSelector``, the selector as a string: the CRD's scale subresource reads it
  (``labelSelectorPath``), so ``kubectl scale`` and the HorizontalPodAutoscaler work on the custom kind;
* a ``Ready`` condition that is True only when the rollout has reached what was asked, with ``observedGeneration``
  on every condition this controller owns. ``kubectl wait`` skips a condition whose ``observedGeneration`` is
  behind ``metadata.generation`` (kubectl ``pkg/cmd/wait/condition.go``), which makes ``kubectl wait
  --for=condition=Ready rsts/web`` a correct "rollout done".

``Ready`` follows ``Progressing`` (progress.py), which applies the one rollout-complete rule of ``api/rollout.py``
for every strategy: True with ``RolloutComplete`` (``RecreateComplete``), or ``PartitionRolledOut`` for a set held
at its partition on purpose; False with Progressing's reason and message otherwise (``RolloutInProgress``,
``ProgressDeadlineExceeded``, ``SafetyHalt`` ...), so on-call reads the same words in both. ``rollwise rollout
status`` applies the same rule (api/rollout.py ``status_progress``), so the two agree.

``apps/v1`` status has neither field (kube-controller-manager's shape is kept as upstream writes it), so both
apply to the ``apps.rollwise.dev`` kind only.
"""

from __future__ import annotations

from rollwise.api.meta import PROJECT_GROUP, Obj, format_selector
from rollwise.api.reasons import says_complete
from rollwise.api.rollout import PARTITION_ROLLED_OUT, ROLLOUT_COMPLETE

__all__ = ["READY", "is_custom_kind", "ready_condition", "with_generation", "with_selector"]

READY = "Ready"


def is_custom_kind(sts: Obj) -> bool:
    return str(sts.get("apiVersion", "")).split("/")[0] == PROJECT_GROUP


def ready_condition(progressing: Obj, status: Obj) -> Obj:
    """Ready from this reconcile's Progressing condition and status (written together: of the same generation)."""
    reason = str(progressing.get("reason") or "RolloutInProgress")
    message = str(progressing.get("message") or "")
    if not says_complete(progressing.get("status"), reason):
        return {"type": READY, "status": "False", "reason": reason, "message": message}
    if reason != PARTITION_ROLLED_OUT:
        reason = ROLLOUT_COMPLETE  # Ready's words for "done" whatever the strategy (Recreate says so in Progressing)
        message = f"{status.get('replicas', 0)} replicas ready at revision {status.get('updateRevision')}"
    return {"type": READY, "status": "True", "reason": reason, "message": message}


def with_generation(sts: Obj, conditions: list[Obj]) -> list[Obj]:
    generation = int((sts.get("metadata") or {}).get("generation", 1))
    return [{**c, "observedGeneration": generation} for c in conditions]


def with_selector(sts: Obj, status: Obj) -> Obj:
    return {**status, "labelSelector": format_selector((sts.get("spec") or {}).get("selector"))}
