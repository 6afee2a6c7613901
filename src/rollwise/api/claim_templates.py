"""Claim template updates (KEP-4650, "StatefulSet Support for Updating Volume Claim Template"): what may change in
``spec.volumeClaimTemplates`` on update, and how an existing claim compares with its template.

KEP-4650 lets ``volumeClaimTemplates`` change. rollwise takes its ``InPlace`` design for the one field a claim can
change in place everywhere, ``spec.resources.requests.storage`` (volume expansion), and names the policy
``spec.volumeClaimUpdatePolicy: OnClaimDelete | InPlace`` (OnClaimDelete, the default, is today's behaviour: a
changed template shapes the claims created from now on). Shrinking is refused at validation: no volume shrinks in
place, and a smaller template would only ever apply to claims created later, which is better said at once.

A claim is *compatible* with its template (KEP-4650, "What PVC is compatible") when the fields it cannot change
match and its ``status.capacity.storage`` is at least the template's request.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.quantity import parse_quantity
from rollwise.api.validation_rules import check_enum

__all__ = [
    "CLAIM_SPEC_FIELDS",
    "CLAIM_UPDATE_POLICIES",
    "FIXED_CLAIM_FIELDS",
    "IN_PLACE",
    "ON_CLAIM_DELETE",
    "RESIZE_REFUSED_ANNOTATION",
    "SHRINK_RULE",
    "capacity_of",
    "check_claim_spec",
    "check_claim_template_update",
    "claim_update_policy",
    "fixed_differences",
    "quantity_or_none",
    "requested_storage",
]

ON_CLAIM_DELETE = "OnClaimDelete"
IN_PLACE = "InPlace"
CLAIM_UPDATE_POLICIES = (ON_CLAIM_DELETE, IN_PLACE)
CLAIM_SPEC_FIELDS = frozenset({"volumeClaimTemplates", "volumeClaimUpdatePolicy"})
"""The spec fields KEP-4650 makes mutable (``validation.MUTABLE_SPEC_FIELDS``)."""

RESIZE_REFUSED_ANNOTATION = "rollwise.dev/resize-refused"
"""On a claim whose expansion the API server refused: ``<size>: <the server's message>`` (the executor writes it;
the controller reads it, names the claim and its class in the set's condition and does not retry that size)."""

SHRINK_RULE = "may not be less than the previous value"
"""The rule a smaller storage request breaks (kube-apiserver's wording for a claim's own request)."""

FIXED_CLAIM_FIELDS = ("accessModes", "storageClassName", "volumeMode", "selector", "dataSource", "dataSourceRef")
"""Claim spec fields a bound claim cannot change: a template change to one of them shapes new claims only."""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def claim_update_policy(sts: Mapping[str, Any]) -> str:
    """``spec.volumeClaimUpdatePolicy``; absent means OnClaimDelete."""
    value = _mapping(sts.get("spec")).get("volumeClaimUpdatePolicy")
    return value if isinstance(value, str) and value else ON_CLAIM_DELETE


def quantity_or_none(value: object) -> Decimal | None:
    """A quantity's amount, or None when it is missing or malformed (validation reports those)."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return None
    try:
        return parse_quantity(value)
    except ValueError:
        return None


def requested_storage(claim_or_template: Mapping[str, Any]) -> object:
    """``spec.resources.requests.storage`` of a claim or a claim template, as written (None when absent)."""
    spec = _mapping(claim_or_template.get("spec"))
    return _mapping(_mapping(spec.get("resources")).get("requests")).get("storage")


def reported_capacity(claim: Mapping[str, Any]) -> object:
    """``status.capacity.storage`` as written (None when no provisioner has reported on the claim)."""
    return _mapping(_mapping(claim.get("status")).get("capacity")).get("storage")


def capacity_of(claim: Mapping[str, Any]) -> object:
    """What the claim's volume holds: ``status.capacity.storage``; a claim no provisioner has reported on (the
    simulator's store binds nothing) holds what it asked for."""
    capacity = reported_capacity(claim)
    return capacity if capacity is not None else requested_storage(claim)


def claim_conditions(claim: Mapping[str, Any]) -> list[dict[str, object]]:
    """Each ``status.conditions`` entry's type and status (``Resizing``, ``FileSystemResizePending``), skipping
    entries of any other shape."""
    conditions = _mapping(claim.get("status")).get("conditions")
    return [{"type": c.get("type"), "status": c.get("status")}
            for c in (conditions if isinstance(conditions, list) else ()) if isinstance(c, Mapping)]


def fixed_differences(claim: Mapping[str, Any], template: Mapping[str, Any]) -> list[str]:
    """The fixed fields (``FIXED_CLAIM_FIELDS``) the template sets to something else than the claim has."""
    have, want = _mapping(claim.get("spec")), _mapping(template.get("spec"))
    return [f for f in FIXED_CLAIM_FIELDS if want.get(f) is not None and want.get(f) != have.get(f)]


def check_claim_spec(spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> list[FieldError]:
    """``spec.volumeClaimUpdatePolicy`` when given, and the update rules against ``old_spec`` (empty on create)."""
    errors: list[FieldError] = []
    if spec.get("volumeClaimUpdatePolicy") is not None:
        errors += check_enum(spec["volumeClaimUpdatePolicy"], "spec.volumeClaimUpdatePolicy", CLAIM_UPDATE_POLICIES)
    return errors + check_claim_template_update(spec, old_spec)


def check_claim_template_update(spec: Mapping[str, Any], old_spec: Mapping[str, Any]) -> list[FieldError]:
    """The update rules of ``volumeClaimTemplates``: a template's storage request may grow, never shrink (templates
    are matched by name; a new template is a new claim and may ask for anything)."""
    old_by_name = {}
    old_templates = old_spec.get("volumeClaimTemplates")
    for template in old_templates if isinstance(old_templates, list) else ():  # another type: refused by its own rule
        name = _mapping(template.get("metadata")).get("name") if isinstance(template, Mapping) else None
        if isinstance(name, str):  # a name of another type is refused by the name's own rule
            old_by_name[name] = template
    templates = spec.get("volumeClaimTemplates")
    if not isinstance(templates, list):
        return []
    errors: list[FieldError] = []
    for i, template in enumerate(templates):
        if not isinstance(template, Mapping):
            continue
        name = _mapping(template.get("metadata")).get("name")
        old = old_by_name.get(name) if isinstance(name, str) else None
        if old is None:
            continue
        new_value = requested_storage(template)
        new_amount, old_amount = quantity_or_none(new_value), quantity_or_none(requested_storage(old))
        if new_amount is not None and old_amount is not None and new_amount < old_amount:
            errors.append(FieldError(path=f"spec.volumeClaimTemplates[{i}].spec.resources.requests.storage",
                                     kind="Forbidden", value=new_value, rule=SHRINK_RULE))
    return errors
