"""Claim template updates (KEP-4650, kubernetes/enhancements keps/sig-apps/4650-stateful-set-update-claim-template):
expanding existing claims under ``volumeClaimUpdatePolicy: InPlace``, and the per-template report in the status.

KEP-4650, "Updated Reconciliation Logic": a claim's ``spec.resources.requests.storage`` is patched to max(template,
claim's capacity) — never decreased, and no claim is ever deleted. As pods roll, one replica at a time from the
highest ordinal, down to the partition: the next replica's claims are expanded only once every claim above is
*compatible* ("What PVC is compatible": capacity at least the template's request). No pod is touched: a claim
template is not part of the revision (``api/revisions.revision_data`` holds the pod template only, as upstream), so
a claim-template-only change rolls no pod.

What a claim cannot take (its class, access modes, ...) shapes the claims created from now on; the status lists
those fields per template (``newClaimsOnly``) and an event says so when the list changes, so a change is never
silently ignored. The report is written with InPlace, or once a claim differs from its template; a set whose
templates never changed (generation 1) and is not InPlace skips the walk over its claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from rollwise.api.claim_templates import (
    IN_PLACE,
    RESIZE_REFUSED_ANNOTATION,
    capacity_of,
    claim_update_policy,
    fixed_differences,
    quantity_or_none,
    requested_storage,
)
from rollwise.api.identity import claim_name
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.api.quantity import canonical_quantity
from rollwise.controllers.plan import Blocked, ResizeClaim
from rollwise.controllers.statefulset.context import Sync

__all__ = ["STORAGE_FIELD", "ClaimReport", "plan_claim_updates", "with_claim_progress"]

STORAGE_FIELD = "resources.requests.storage"


class ClaimReport:
    """What this reconcile found about the claims: the status entries, and what the Progressing condition says."""

    __slots__ = ("entries", "refused", "resizing")

    def __init__(self) -> None:
        self.entries: list[Obj] = []
        self.resizing: str = ""
        """Which claims are expanding (for the Progressing message), or empty."""
        self.refused: str = ""
        """Why a claim cannot expand, naming the claim and its class (Progressing turns False), or empty."""


def _annotation(claim: Mapping[str, Any]) -> str:
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(RESIZE_REFUSED_ANNOTATION)
    return value if isinstance(value, str) else ""


def _class_of(claim: Mapping[str, Any]) -> str:
    value = (claim.get("spec") or {}).get("storageClassName")
    return value if isinstance(value, str) else ""


def _where(claim: Mapping[str, Any]) -> str:
    cls = _class_of(claim)
    return f"StorageClass {cls}" if cls else "the default StorageClass"


def plan_claim_updates(sync: Sync, old_status: Mapping[str, Any]) -> ClaimReport | None:
    """Expansions for this reconcile (appended to ``sync.actions``) and the report; None when there is nothing to
    report (no templates, or a set that never changed them, is not InPlace and reported nothing before)."""
    templates = [t for t in sync.spec.get("volumeClaimTemplates") or () if isinstance(t, Mapping)]
    if not templates:
        return None
    in_place = claim_update_policy(sync.sts) == IN_PLACE
    generation = int(sync.sts["metadata"].get("generation") or 1)
    if not in_place and generation <= 1 and not old_status.get("volumeClaimTemplates"):
        return None
    set_name, namespace = name_of(sync.sts), namespace_of(sync.sts)
    ordinals = list(reversed(sync.span))  # highest first
    report = ClaimReport()
    differs = False
    for template in templates:
        entry = _report_template(sync, template, set_name, ordinals, in_place)
        differs = differs or entry.pop("_differs")
        report.entries.append(entry)
    if in_place:
        _expand(sync, templates, set_name, namespace, ordinals, report)
    if not in_place and not differs:
        return None
    _announce(sync, report.entries, old_status)
    return report


def _report_template(sync: Sync, template: Mapping[str, Any], set_name: str, ordinals: list[int],
                     in_place: bool) -> Obj:
    tname = name_of(template)
    want = quantity_or_none(requested_storage(template))
    compatible = updating = oversized = 0
    total = Decimal(0)
    fixed: set[str] = set()
    under = False
    for ordinal in ordinals:
        claim = sync.claims.get(claim_name(tname, set_name, ordinal))
        if claim is None:
            continue
        capacity = quantity_or_none(capacity_of(claim))
        request = quantity_or_none(requested_storage(claim))
        total += capacity or 0
        differences = fixed_differences(claim, template)
        fixed.update(differences)
        big_enough = want is None or (capacity is not None and capacity >= want)
        under = under or not big_enough
        compatible += not differences and big_enough
        updating += request is not None and capacity is not None and request > capacity
        oversized += want is not None and capacity is not None and capacity > want
    if under and not in_place:
        fixed.add(STORAGE_FIELD)  # OnClaimDelete: a grown request reaches a claim only when it is made again
    entry: Obj = {"name": tname, "compatibleReplicas": compatible, "updatingReplicas": updating,
                  "overSizedReplicas": oversized, "totalCapacity": _sum_text(total)}
    if fixed:
        entry["newClaimsOnly"] = sorted(fixed)
    entry["_differs"] = bool(fixed) or under or updating > 0
    return entry


def _sum_text(total: Decimal) -> str:
    """A sum of capacities as a quantity, in binary units when it is whole kibibytes (``3Gi``, not 3221225472)."""
    if total > 0 and total % 1024 == 0:
        return canonical_quantity(f"{total // 1024}Ki")
    return canonical_quantity(str(total))


def _expand(sync: Sync, templates: list[Mapping[str, Any]], set_name: str, namespace: str, ordinals: list[int],
            report: ClaimReport) -> None:
    """KEP-4650's InPlace walk: from the highest ordinal down to the partition, one replica's claims at a time."""
    entries = {e["name"]: e for e in report.entries}
    for ordinal in ordinals:
        if sync.position(ordinal) < sync.floor:
            return  # below the partition: those replicas keep their claims, as their pods keep their revision
        waiting: list[str] = []
        for template in templates:
            want_text = requested_storage(template)
            want = quantity_or_none(want_text)
            name = claim_name(name_of(template), set_name, ordinal)
            claim = sync.claims.get(name)
            if claim is None or want is None:
                continue
            capacity = quantity_or_none(capacity_of(claim))
            if capacity is not None and capacity >= want:
                continue  # compatible
            request = quantity_or_none(requested_storage(claim))
            target = str(want_text)
            refusal = _annotation(claim)
            if refusal.startswith(f"{target}:"):
                report.refused = (f"claim {name} ({_where(claim)}) cannot expand to {target}: "
                                  f"{refusal[len(target) + 1:].strip()}")
                entries[name_of(template)]["message"] = report.refused
                sync.blocked.append(Blocked(pod="", cause=report.refused))
                return
            if request is None or request < want:
                # max(template, capacity): capacity is below the template here, so the template's request
                sync.actions.append(ResizeClaim(name=name, namespace=namespace, storage=target,
                                                storage_class=_class_of(claim),
                                                reason=f"claim template {name_of(template)} asks for {target}"))
            waiting.append(f"{name} to {target}")
        if waiting:
            report.resizing = "expanding claim " + ", ".join(waiting)
            sync.blocked.append(Blocked(pod="", cause=report.resizing))
            return


def _announce(sync: Sync, entries: list[Obj], old_status: Mapping[str, Any]) -> None:
    """An event when a template's fields that reach new claims only change (the level the status holds)."""
    before = {e.get("name"): e.get("newClaimsOnly") for e in old_status.get("volumeClaimTemplates") or ()
              if isinstance(e, Mapping)}
    for entry in entries:
        fields = entry.get("newClaimsOnly")
        if fields and before.get(entry["name"]) != fields:
            sync.event("ClaimTemplateChanged",
                       f"claim template {entry['name']}: {', '.join(fields)} apply to claims created from now on; "
                       f"existing claims keep theirs")


def with_claim_progress(conditions: list[Obj], report: ClaimReport | None) -> list[Obj]:
    """The Progressing condition (first) says which claims are expanding, or, when one cannot, turns False with
    reason ClaimResizeRefused naming the claim and its class."""
    if report is None or not conditions or not (report.refused or report.resizing):
        return conditions
    first = dict(conditions[0])
    if report.refused:
        first.update(status="False", reason="ClaimResizeRefused", message=report.refused)
    elif report.resizing not in str(first.get("message", "")):
        first["message"] = f"{first.get('message', '')}; {report.resizing}".lstrip("; ")
    return [first, *conditions[1:]]
