"""The rules a store must keep whatever happened: judged on the objects of one moment (or of two consecutive
moments, for what must never disappear), not on who did what.

- one-pod-per-ordinal: no two pods of a set claim one ordinal;
- recreate-never-mixes: under Recreate, never pods of two revisions at once, terminating ones included (seed 000);
- claims: never a claim deleted while its ordinal is in range, nor under whenScaled Retain (reference §6.2);
- status: once the controller has nothing left to do, its status counters agree with the pods.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rollwise.api import predicates as p
from rollwise.api.features import FeatureGates
from rollwise.api.identity import ordinal_of, revision_of
from rollwise.api.meta import Obj, controller_of, name_of
from rollwise.api.ordinals import OrdinalSpan
from rollwise.api.strategies import RECREATE
from rollwise.controllers.statefulset.limits import limits_of

__all__ = ["claims_lost", "one_pod_per_ordinal", "recreate_never_mixes", "status_agrees_with_pods"]


def _set_of(pod: Obj) -> str:
    """The set a pod belongs to: its controller's name, or for an orphan the name without the ordinal."""
    ref = controller_of(pod)
    return str(ref["name"]) if ref is not None else name_of(pod).rpartition("-")[0]


def one_pod_per_ordinal(pods: Iterable[Obj], *, single_set: bool = False) -> list[str]:
    """No two pods claim one ordinal (by the pod-index label or the name) of one set; ``single_set``: the pods
    are one set's, and the message leaves its name out."""
    seen: Counter[tuple[str, int]] = Counter(
        ("" if single_set else _set_of(pod), o) for pod in pods if (o := ordinal_of(pod)) >= 0)
    return [f"{owner + ' has ' if owner else ''}{n} pods at ordinal {o}" for (owner, o), n in seen.items() if n > 1]


def recreate_never_mixes(sts: Obj, pods: Sequence[Obj], gates: FeatureGates) -> list[str]:
    if limits_of(sts, gates).update_type != RECREATE:
        return []
    revisions = {revision_of(pod) for pod in pods}
    if len(revisions) > 1:
        return [f"pods of {len(revisions)} revisions at once: "
                + ", ".join(f"{name_of(pod)}@{revision_of(pod)}" for pod in pods)]
    return []


def claims_lost(before: Iterable[str], after: Iterable[str], span: OrdinalSpan, when_scaled: str) -> list[str]:
    """Claims present in ``before`` and gone in ``after`` (names ``<template>-<set>-<ordinal>``) that had to stay:
    their ordinal is in range (``span`` after the change), or the set retains claims when scaled down."""
    problems = []
    for claim in sorted(set(before) - set(after)):
        ordinal = int(claim.rsplit("-", 1)[1])
        if ordinal in span:
            problems.append(f"claim {claim} deleted while ordinal {ordinal} is in range")
        elif when_scaled == "Retain":
            problems.append(f"claim {claim} deleted under whenScaled Retain")
    return problems


def status_agrees_with_pods(sts: Obj, pods: Sequence[Obj], now: float) -> list[str]:
    """For a settled controller: the counters it reports are the pods' (the rules of compute_status, recounted)."""
    status = sts.get("status") or {}
    if status.get("observedGeneration") != sts["metadata"].get("generation"):
        return [f"observedGeneration {status.get('observedGeneration')} behind generation "
                f"{sts['metadata'].get('generation')} with nothing left to do"]
    created = [pod for pod in pods if p.is_created(pod)]
    mrs = float(sts["spec"].get("minReadySeconds") or 0)
    live = [pod for pod in created if not p.is_terminating(pod)]
    want = {
        "replicas": len(created),
        "readyReplicas": sum(p.is_running_and_ready(pod) for pod in created),
        "availableReplicas": sum(p.is_available(pod, mrs, now) for pod in created),
        "updatedReplicas": sum(revision_of(pod) == status.get("updateRevision") for pod in live),
    }
    return [f"status.{k} is {status.get(k, 0)}, the pods say {v}" for k, v in want.items() if status.get(k, 0) != v]
