"""The CRD's parts for claim template updates (KEP-4650, ``api/claim_templates.py``): the policy field, the words on
the claim templates and their storage, and ``status.volumeClaimTemplates`` (``controllers/statefulset/
claim_updates.py`` writes it). Plain schema, so ``crd.py`` only places them."""

from __future__ import annotations

from typing import Any

from rollwise.api.claim_templates import CLAIM_UPDATE_POLICIES

__all__ = ["CLAIM_STORAGE", "CLAIM_TEMPLATES", "claim_status_schema", "claim_update_policy_schema"]

CLAIM_TEMPLATES = ("Claims each pod gets, one per template. A template's storage request may grow (see "
                   "volumeClaimUpdatePolicy); other changes shape the claims created from then on, and "
                   "status.volumeClaimTemplates reports the claims that differ.")
CLAIM_STORAGE = ("The claim's storage request (requests.storage). It may grow on update, never shrink: with "
                 "volumeClaimUpdatePolicy InPlace the controller expands each existing claim to it. A shrink is "
                 "refused by a transition rule on volumeClaimTemplates, which uses Kubernetes' CEL quantity library "
                 "(kube-apiserver's, and rollwise up's); the controller never shrinks a claim whatever the template "
                 "says.")


def claim_update_policy_schema() -> dict[str, Any]:
    return {"description": "KEP-4650: what a grown storage request in a claim template does to existing claims. "
                           "OnClaimDelete (the default when absent): nothing, a claim gets the new size when it is "
                           "deleted and made again. InPlace: each existing claim's request is expanded to the "
                           "template's, one replica at a time from the highest ordinal (down to the partition), "
                           "without touching a pod; a claim is never shrunk or deleted.",
            "type": "string", "enum": list(CLAIM_UPDATE_POLICIES)}


def _count(description: str) -> dict[str, Any]:
    return {"description": description, "type": "integer", "format": "int32", "maximum": 2**31 - 1}


def claim_status_schema() -> dict[str, Any]:
    entry = {
        "name": {"description": "The template's name.", "type": "string"},
        "compatibleReplicas": _count("Replicas whose claim holds at least the template's storage request and matches "
                                     "its fixed fields."),
        "updatingReplicas": _count("Replicas whose claim is being expanded (its request above its capacity)."),
        "overSizedReplicas": _count("Replicas whose claim holds more than the template asks for."),
        "totalCapacity": {"description": "The sum of the claims' status.capacity.storage.", "type": "string"},
        "newClaimsOnly": {"description": "Template fields existing claims cannot take (storageClassName, "
                                         "accessModes, ...): they shape claims created from now on.",
                          "type": "array", "items": {"type": "string"}},
        "message": {"description": "Why a claim is not expanding, naming the claim and its StorageClass.",
                    "type": "string"},
    }
    return {"description": "KEP-4650: per claim template, how the existing claims of in-range replicas compare with "
                           "it (reported with volumeClaimUpdatePolicy InPlace, or when a claim differs from its "
                           "template).",
            "type": "array", "items": {"description": "The claims made from one template.", "type": "object",
                                       "properties": entry, "required": ["name"]}}
