"""The CustomResourceDefinition ``statefulsets.apps.rollwise.dev`` (operator-plan §2), built from rollwise's API.

The enums come from the API's own constants (the strategy types, the API version); the ``minimum`` of each count
is the one ``api/validation.py`` enforces, and ``tests/cli/test_manifests.py`` walks every enum and minimum here
through ``validate_statefulset`` so the two cannot drift. ``template`` and ``volumeClaimTemplates`` are kept
whole (``x-kubernetes-preserve-unknown-fields``), as Kruise and PingCAP do: the real check of a pod template is
rollwise's validation, reported as a condition and an event (DESIGN principle 5), not the API server's pruning.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.defaults import (
    STRATEGY_BLOCKS,
    STRATEGY_ENFORCED_ROLLING_UPDATE,
    STRATEGY_ON_DELETE,
    STRATEGY_RECREATE,
    STRATEGY_ROLLING_UPDATE,
)
from rollwise.cluster.resources import ROLLWISE_PRINTER_COLUMNS

__all__ = ["COUNT_MINIMUMS", "CR_GROUP", "CR_VERSION", "ENUMS", "crd"]

CR_GROUP = "apps.rollwise.dev"
CR_VERSION = "v1alpha1"

STRATEGY_TYPES = (STRATEGY_ROLLING_UPDATE, STRATEGY_ON_DELETE, STRATEGY_RECREATE, STRATEGY_ENFORCED_ROLLING_UPDATE)

# Field path (under spec) -> the least value validation accepts; None: any int32.
COUNT_MINIMUMS: dict[str, int | None] = {
    "replicas": 0,
    "minReadySeconds": 0,
    "revisionHistoryLimit": None,
    "progressDeadlineSeconds": 1,
    "ordinals.start": 0,
    "updateStrategy.{block}.partition": 0,
    "updateStrategy.{block}.podProgressTimeoutSeconds": 1,
}

ENUMS: dict[str, tuple[str, ...]] = {
    "podManagementPolicy": ("OrderedReady", "Parallel"),
    "updateStrategy.type": STRATEGY_TYPES,
    "persistentVolumeClaimRetentionPolicy.whenDeleted": ("Retain", "Delete"),
    "persistentVolumeClaimRetentionPolicy.whenScaled": ("Retain", "Delete"),
}


def _int(minimum: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "integer", "format": "int32"}
    if minimum is not None:
        out["minimum"] = minimum
    return out


def _string(enum: tuple[str, ...] | None = None) -> dict[str, Any]:
    return {"type": "string", "enum": list(enum)} if enum else {"type": "string"}


_KEEP: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _rolling_block() -> dict[str, Any]:
    return {"type": "object", "properties": {
        "partition": _int(COUNT_MINIMUMS["updateStrategy.{block}.partition"]),
        "maxUnavailable": {"x-kubernetes-int-or-string": True,
                           "description": "KEP-961: an absolute number or a percentage of replicas."},
        "podProgressTimeoutSeconds": _int(COUNT_MINIMUMS["updateStrategy.{block}.podProgressTimeoutSeconds"]),
    }}


def _selector() -> dict[str, Any]:
    return {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {
        "matchLabels": {"type": "object", "additionalProperties": {"type": "string"}},
        "matchExpressions": {"type": "array", "items": {"type": "object", "required": ["key", "operator"],
                                                         "properties": {
                                                             "key": {"type": "string"},
                                                             "operator": {"type": "string"},
                                                             "values": {"type": "array",
                                                                        "items": {"type": "string"}}}}},
    }}


def spec_schema() -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": "object", "properties": {"type": _string(ENUMS["updateStrategy.type"])}}
    for block, _owner in STRATEGY_BLOCKS:
        strategy["properties"][block] = _rolling_block()
    return {
        "type": "object",
        "required": ["selector", "template"],
        "properties": {
            "replicas": _int(COUNT_MINIMUMS["replicas"]),
            "minReadySeconds": _int(COUNT_MINIMUMS["minReadySeconds"]),
            "revisionHistoryLimit": _int(COUNT_MINIMUMS["revisionHistoryLimit"]),
            "progressDeadlineSeconds": _int(COUNT_MINIMUMS["progressDeadlineSeconds"]),
            "serviceName": _string(),
            "podManagementPolicy": _string(ENUMS["podManagementPolicy"]),
            "ordinals": {"type": "object", "properties": {"start": _int(COUNT_MINIMUMS["ordinals.start"])}},
            "selector": _selector(),
            "template": _KEEP,
            "volumeClaimTemplates": {"type": "array", "items": _KEEP},
            "updateStrategy": strategy,
            "persistentVolumeClaimRetentionPolicy": {"type": "object", "properties": {
                "whenDeleted": _string(ENUMS["persistentVolumeClaimRetentionPolicy.whenDeleted"]),
                "whenScaled": _string(ENUMS["persistentVolumeClaimRetentionPolicy.whenScaled"]),
            }},
        },
    }


def status_schema() -> dict[str, Any]:
    counts = ("observedGeneration", "replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
              "availableReplicas", "collisionCount")
    props: dict[str, Any] = {name: {"type": "integer", "format": "int64" if name == "observedGeneration"
                                    else "int32"} for name in counts}
    props.update({"currentRevision": _string(), "updateRevision": _string(),
                  "labelSelector": {"type": "string", "description": "The selector as a string, for the scale "
                                                                     "subresource (HPA, kubectl scale)."}})
    props["conditions"] = {"type": "array", "items": {
        "type": "object", "required": ["type", "status"], "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"type": _string(), "status": _string(("True", "False", "Unknown")), "reason": _string(),
                       "message": _string(), "lastTransitionTime": {"type": "string", "format": "date-time"},
                       "observedGeneration": {"type": "integer", "format": "int64"}}}}
    # Unknown status fields are kept, so a newer controller's additions survive an older CRD.
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": props}


PRINTER_COLUMNS: list[dict[str, Any]] = [dict(column) for column in ROLLWISE_PRINTER_COLUMNS]


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"statefulsets.{CR_GROUP}", "labels": {"app.kubernetes.io/name": "rollwise"}},
        "spec": {
            "group": CR_GROUP,
            "scope": "Namespaced",
            "names": {"kind": "StatefulSet", "listKind": "StatefulSetList", "plural": "statefulsets",
                      "singular": "statefulset", "shortNames": ["rsts"], "categories": ["all", "rollwise"]},
            "versions": [{
                "name": CR_VERSION, "served": True, "storage": True,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                         "statusReplicasPath": ".status.replicas",
                                                         "labelSelectorPath": ".status.labelSelector"}},
                "additionalPrinterColumns": PRINTER_COLUMNS,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "description": "A StatefulSet run by rollwise: the apps/v1 spec plus maxUnavailable (KEP-961), "
                                   "Recreate, EnforcedRollingUpdate and podProgressTimeoutSeconds (KEP-3541).",
                    "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                   "metadata": {"type": "object"}, "spec": spec_schema(),
                                   "status": status_schema()},
                }},
            }],
        },
    }
