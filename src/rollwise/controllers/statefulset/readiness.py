"""What the custom kind's status adds for Kubernetes tooling (operator-plan §2, "Status"):

* ``status.labelSelector``, the selector as a string: the CRD's scale subresource reads it
  (``labelSelectorPath``), so ``kubectl scale`` and the HorizontalPodAutoscaler work on the custom kind;
* a ``Ready`` condition that is True only when the rollout is done, with ``observedGeneration`` on every condition
  this controller owns. ``kubectl wait`` skips a condition whose ``observedGeneration`` is behind
  ``metadata.generation`` (kubectl ``pkg/cmd/wait/condition.go``), which makes ``kubectl wait
  --for=condition=Ready rsts/web`` a correct "rollout done".

``apps/v1`` status has neither field (kube-controller-manager's shape is kept as upstream writes it), so both
apply to the ``apps.rollwise.dev`` kind only.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.meta import Obj, format_selector

__all__ = ["CUSTOM_API_GROUP", "READY", "is_custom_kind", "ready_condition", "with_generation", "with_selector"]

CUSTOM_API_GROUP = "apps.rollwise.dev"
READY = "Ready"


def is_custom_kind(sts: Obj) -> bool:
    return str(sts.get("apiVersion", "")).split("/")[0] == CUSTOM_API_GROUP


def _partition(spec: dict[str, Any]) -> int:
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return 0
    return int((strategy.get("rollingUpdate") or {}).get("partition") or 0)


def ready_condition(sts: Obj, status: Obj) -> Obj:
    """True when observedGeneration == generation, updated ≥ replicas - partition, ready == replicas and
    currentRevision == updateRevision (operator-plan §2); otherwise False with what is missing."""
    spec = sts.get("spec") or {}
    want = int(spec.get("replicas", 1))
    generation = int((sts.get("metadata") or {}).get("generation", 1))
    missing: list[str] = []
    if int(status.get("observedGeneration") or 0) != generation:
        missing.append(f"generation {generation} not yet observed")
    updated = int(status.get("updatedReplicas") or 0)
    if updated < want - _partition(spec):
        missing.append(f"{updated} of {want - _partition(spec)} replicas updated")
    ready = int(status.get("readyReplicas") or 0)
    if ready != want or int(status.get("replicas") or 0) != want:
        missing.append(f"{ready} of {want} replicas ready")
    if status.get("currentRevision") != status.get("updateRevision"):
        missing.append(f"revision {status.get('updateRevision')} not yet current")
    if missing:
        return {"type": READY, "status": "False", "reason": "RolloutInProgress", "message": "; ".join(missing)}
    return {"type": READY, "status": "True", "reason": "RolloutComplete",
            "message": f"{want} replicas ready at revision {status.get('updateRevision')}"}


def with_generation(sts: Obj, conditions: list[Obj]) -> list[Obj]:
    generation = int((sts.get("metadata") or {}).get("generation", 1))
    return [{**c, "observedGeneration": generation} for c in conditions]


def with_selector(sts: Obj, status: Obj) -> Obj:
    return {**status, "labelSelector": format_selector((sts.get("spec") or {}).get("selector"))}
