"""``rollwise migrate rsts/NAME --to apps/v1``: hand a custom set back to the built-in StatefulSet controller
without restarting a pod (docs/install.md, "The way back").

The forward procedure (``cli/migrate.py``, PingCAP's order) run the other way: relabel revisions the selector misses,
create the ``apps/v1`` set with the same spec and revision bookkeeping, delete the custom set with
``propagationPolicy: Orphan`` (the garbage collector strips its owner references from pods, claims and revisions),
then wait until kube-controller-manager has adopted every pod. The pods keep their UIDs because the revision name
hashes only the pod template under the set's name, so every pod is already at the new owner's current revision.

What ``apps/v1`` lacks is refused before anything is written (exit 2, the field named): the strategy types of
KEP-3541 (``Recreate``, ``EnforcedRollingUpdate``), their ``enforcedRollingUpdate`` block and
``podProgressTimeoutSeconds`` need ``--strategy`` to say what to use instead; ``progressDeadlineSeconds`` (rollwise's
own condition) must be removed from the set first. ``maxUnavailable`` stays: it is ``apps/v1``'s own field (KEP-961).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from rollwise.api.claim_templates import ON_CLAIM_DELETE
from rollwise.api.errors import ApiStatusError, FieldError
from rollwise.api.field_schema import APPS_V1_STATEFULSET_SPEC, pruned_to_schema
from rollwise.api.in_place import RECREATE_POLICY
from rollwise.api.meta import LAST_APPLIED, Obj, name_of
from rollwise.api.strategies import (
    BLOCK_KEYS,
    ENFORCED_BLOCK,
    ENFORCED_ROLLING_UPDATE,
    ON_DELETE,
    RECREATE,
    ROLLING_BLOCK,
    ROLLING_UPDATE,
)
from rollwise.api.values import clone
from rollwise.cli.handover import (
    hand_over,
    owned,
    refuse_existing,
    refuse_unmovable,
    relabel_revisions,
    twin_of,
)
from rollwise.cluster.client.scope import MANAGED_BY_LABEL
from rollwise.cluster.resources import POD, ROLLWISE_STATEFULSET, STATEFULSET

__all__ = ["APPS_V1_STRATEGIES", "apps_v1_set_for", "fields_apps_v1_lacks", "migrate_back"]

APPS_V1_STRATEGIES = (ROLLING_UPDATE, ON_DELETE)
_DROPPED_ANNOTATIONS = (LAST_APPLIED,
                        "rollwise.dev/progress-timeouts")  # the custom controller's own memory
_STRATEGY_HINT = f"pass --strategy {ROLLING_UPDATE} or --strategy {ON_DELETE}"


_SAME_AS_APPS_V1 = {"spec.updateStrategy.rollingUpdate.podUpdatePolicy": RECREATE_POLICY,
                    "spec.volumeClaimUpdatePolicy": ON_CLAIM_DELETE}
"""rollwise's own fields at the value that does what apps/v1 does anyway: left out of the apps/v1 set, not refused
(the CRD defaults ``podUpdatePolicy`` to ReCreate on every set)."""

_WHY = {
    "spec.progressDeadlineSeconds": "apps/v1 has no such field; remove it from the set first (it only sets "
                                    "rollwise's Progressing condition)",
    "spec.paused": "apps/v1 has no such field, and kube-controller-manager would roll a paused set at once; resume "
                   "it (rollwise rollout resume) or remove the field first",
    "spec.lifecycle": "apps/v1 has no such field, and kube-controller-manager would delete pods without waiting for "
                      "their pre-delete hooks (a pod marked PreparingDelete at once); remove the field first, once no "
                      "pod is PreparingDelete",
    "spec.reserveOrdinals": "apps/v1 has no such field, and kube-controller-manager would run ordinals 0 to "
                            "replicas-1, creating the reserved ones and deleting the pods above them; the set can "
                            "move once it reserves no ordinal",
    "spec.volumeClaimUpdatePolicy": f"apps/v1 has no such field (KEP-4650 is in no release), and "
                                    f"kube-controller-manager never updates a claim; set it to {ON_CLAIM_DELETE} or "
                                    "remove it first",
    "spec.updateStrategy.rollingUpdate.podUpdatePolicy": f"apps/v1 has no such field, and kube-controller-manager "
                                                         f"recreates every outdated pod; set it to {RECREATE_POLICY}, "
                                                         f"remove it, or {_STRATEGY_HINT}",
    "spec.updateStrategy.rollingUpdate.podProgressTimeoutSeconds": f"apps/v1 has no such field; {_STRATEGY_HINT}",
    f"spec.updateStrategy.{ENFORCED_BLOCK}": f"apps/v1 has no such field; {_STRATEGY_HINT}",
}


def _lacking(spec: Obj) -> tuple[Obj, list[FieldError]]:
    """``spec`` without what apps/v1 lacks, and the fields left out (given, not null, not at apps/v1's value)."""
    kept, lacking = pruned_to_schema(spec, APPS_V1_STATEFULSET_SPEC, path="spec")
    return kept, [e for e in lacking if (value := _at(spec, e.path)) is not None
                  and (e.path not in _SAME_AS_APPS_V1 or _SAME_AS_APPS_V1[e.path] != value)]


def _at(spec: Obj, path: str) -> Any:
    value: Any = spec
    for part in path.split(".")[1:]:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def fields_apps_v1_lacks(spec: Obj, strategy: str | None) -> list[str]:
    """One line per field of ``spec`` that ``apps/v1`` has no place for, as ``path: rule``; empty when the set
    can move (``strategy`` replaces the whole update strategy, so it answers every strategy field)."""
    kind = (spec.get("updateStrategy") or {}).get("type")
    strategy_kind = strategy is None and kind in (RECREATE, ENFORCED_ROLLING_UPDATE)
    problems = []
    for err in _lacking(spec)[1]:
        if err.path.startswith("spec.updateStrategy.") and (strategy is not None or strategy_kind):
            continue  # --strategy replaces it, or the strategy type below says what to do
        problems.append(f"{err.path}: {_WHY.get(err.path, 'apps/v1 has no such field; remove it from the set first')}")
    if strategy_kind:
        problems.append(f"spec.updateStrategy.type: apps/v1 has no strategy {kind}; {_STRATEGY_HINT}")
    return problems


def _strategy(update: Obj, strategy: str) -> Obj:
    if strategy == ON_DELETE:
        return {"type": ON_DELETE}
    # The partition and maxUnavailable of whichever block the set used carry over; the progress timeout cannot.
    block = next(filter(None, map(update.get, BLOCK_KEYS)), None) or {}
    kept = {k: v for k, v in block.items() if k in ("partition", "maxUnavailable")}
    return {"type": ROLLING_UPDATE, **({ROLLING_BLOCK: kept} if kept else {})}


def apps_v1_set_for(cr: Obj, strategy: str | None) -> Obj:
    """The ``apps/v1`` twin of a custom set: same name, labels, annotations and spec (``strategy``, when given,
    in place of the update strategy)."""
    spec = clone(cr["spec"])
    if strategy is not None:
        spec["updateStrategy"] = _strategy(spec.get("updateStrategy") or {}, strategy)
    spec = _lacking(spec)[0]  # what is left of rollwise's own fields does what apps/v1 does (fields_apps_v1_lacks)
    return twin_of(cr, api_version="apps/v1", spec=spec, dropped_annotations=_DROPPED_ANNOTATIONS)


async def _unlabel(kube: Any, ns: str, pods: list[Obj]) -> None:
    """The pods are kube-controller-manager's now: rollwise's managed-by label goes (claims keep theirs: the
    built-in controller never writes a claim's labels, and a label is harmless there)."""
    for pod in pods:
        with contextlib.suppress(ApiStatusError):  # gone or changed meanwhile: nothing of ours to remove
            await kube.patch(POD, ns, name_of(pod), {"metadata": {"labels": {MANAGED_BY_LABEL: None}}})


async def migrate_back(kube: Any, ns: str, name: str, strategy: str | None, timeout: float) -> int:
    cr = await kube.get(ROLLWISE_STATEFULSET, ns, name)
    problems = fields_apps_v1_lacks(cr.get("spec") or {}, strategy)
    if problems:
        for line in problems:
            print(f"error: statefulset.apps.rollwise.dev/{name}: {line}", file=sys.stderr)
        return 2
    refuse_unmovable(f"statefulset.apps.rollwise.dev/{name}", cr)
    await refuse_existing(kube, STATEFULSET, f"statefulset.apps/{name}", ns, name)
    pods = await owned(kube, POD, ns, cr)
    await relabel_revisions(kube, ns, cr)
    done = await hand_over(kube, old=cr, old_resource=ROLLWISE_STATEFULSET,
                           old_label=f"statefulset.apps.rollwise.dev/{name}", new=apps_v1_set_for(cr, strategy),
                           new_resource=STATEFULSET, new_label=f"statefulset.apps/{name}", pods=pods,
                           timeout=timeout, adopter="kube-controller-manager's StatefulSet controller")
    if not done:
        return 1
    await _unlabel(kube, ns, pods)
    return 0
