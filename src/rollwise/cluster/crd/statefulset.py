"""The CustomResourceDefinition ``statefulsets.apps.rollwise.dev`` (operator-plan §2), built from rollwise's API.

A structural schema with a description on every field (``kubectl explain rsts.spec.updateStrategy.rollingUpdate``
explains), the apps/v1 defaults as ``default``, and the validation as schema keywords and CEL rules taken from
``api/validation_cel.py`` (which names, for each rule of ``api/validation.py``, its twin here); a container's
fields a Pod's validation checks are ``crd_containers.py``'s. The pod template
and the claim templates declare the fields validation reads and keep the rest (``x-kubernetes-preserve-unknown-
fields``), so a pod spec of any Kubernetes version passes through whole. ``rollwise manifests crd`` writes it.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.claim_templates import CLAIM_UPDATE_POLICIES
from rollwise.api.in_place import POD_UPDATE_POLICIES, RECREATE_POLICY
from rollwise.api.strategies import BLOCK_OWNERS, NAMES, ROLLING_UPDATE
from rollwise.api.validation_cel import (
    DNS_LABEL,
    LABEL_VALUE,
    MAX_LIST,
    CelRule,
    claim_storage_shrink_rule,
    immutable_spec_rule,
    max_unavailable_rule,
    qualified_name_rule,
    selector_matches_template_rule,
    strategy_block_rules,
)
from rollwise.api.validation_pods import DNS_POLICIES
from rollwise.cluster.crd.claims import (
    CLAIM_STORAGE,
    CLAIM_TEMPLATES,
    claim_status_schema,
    claim_update_policy_schema,
)
from rollwise.cluster.crd.containers import container_field_schemas
from rollwise.cluster.crd.lifecycle import lifecycle_schema
from rollwise.cluster.crd.role_probe import role_probe_schema
from rollwise.cluster.crd.steps import steps_schema
from rollwise.cluster.resources import ROLLWISE_PRINTER_COLUMNS

__all__ = ["COUNT_MINIMUMS", "CR_GROUP", "CR_VERSION", "ENUMS", "crd"]

CR_GROUP = "apps.rollwise.dev"
CR_VERSION = "v1alpha1"
INT32_MAX = 2**31 - 1


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
    "updateStrategy.type": NAMES,
    "persistentVolumeClaimRetentionPolicy.whenDeleted": ("Retain", "Delete"),
    "persistentVolumeClaimRetentionPolicy.whenScaled": ("Retain", "Delete"),
    "updateStrategy.{block}.podUpdatePolicy": POD_UPDATE_POLICIES,
    "volumeClaimUpdatePolicy": CLAIM_UPDATE_POLICIES,
}


def _rules(*rules: CelRule) -> dict[str, Any]:
    return {"x-kubernetes-validations": [r.as_schema() for r in rules]}


def _int(description: str, minimum: int | None = None, *, default: int | None = None,
         int64: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "type": "integer", "format": "int64" if int64 else "int32"}
    if minimum is not None:
        out["minimum"] = minimum
    if not int64:
        out["maximum"] = INT32_MAX
    if default is not None:
        out["default"] = default
    return out


def _string(description: str, enum: tuple[str, ...] | None = None, *, default: str | None = None,
            **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "type": "string", **extra}
    if enum:
        out["enum"] = list(enum)
    if default is not None:
        out["default"] = default
    return out


def _object(description: str, properties: dict[str, Any], *, keep: bool = False, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "type": "object", **extra, "properties": properties}
    if keep:
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def _labels(description: str) -> dict[str, Any]:
    # Keys: the ValidatingAdmissionPolicy (``policy()``), as no CRD rule over a map's keys fits the cost limit.
    return {"description": description, "type": "object",
            "additionalProperties": {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE}}


def _annotations(description: str) -> dict[str, Any]:
    return {"description": description, "type": "object", "additionalProperties": {"type": "string"}}


def _quantities(description: str) -> dict[str, Any]:
    # upstream resource.Quantity's serialization, without a sign: validation refuses negative amounts.
    return {"description": description, "type": "object", "additionalProperties": {
        "x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": r"^(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][-+]?(([0-9]+(\.[0-9]*)?)"
                   r"|(\.[0-9]+))))?$"}}


def _resources(what: str) -> dict[str, Any]:
    return _object(f"The {what}'s compute or storage resources.", {
        "limits": _quantities("The most of each resource allowed, as quantities (500m, 2Gi)."),
        "requests": _quantities("The least of each resource required, as quantities (500m, 2Gi)."),
    }, keep=True)


def _container(kind: str) -> dict[str, Any]:
    return _object(f"A{'n init' if kind == 'init' else ''} container of the set's pods; fields not listed here "
                   "are kept as written (the pod API of the cluster's version).", {
                       "name": _string("The container's name: a DNS-1123 label, unique across the pod's "
                                       "containers and init containers.", maxLength=63, pattern=DNS_LABEL),
                       "image": _string("The container image; a change rolls the set.", minLength=1),
                       "resources": _resources("container"),
                       **container_field_schemas(),
                   }, keep=True, required=["name", "image"])


def _containers(description: str, kind: str) -> dict[str, Any]:
    return {"description": description, "type": "array", "maxItems": MAX_LIST, "items": _container(kind),
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}


def _pod_spec() -> dict[str, Any]:
    unique = CelRule(rule="!has(self.initContainers) || self.initContainers.all(i, !self.containers.exists(c, "
                          "c.name == i.name))",
                     message="names must be unique across containers and initContainers", reason="FieldValueDuplicate",
                     field_path=".containers")
    no_deadline = CelRule(rule="!has(self.activeDeadlineSeconds)", reason="FieldValueForbidden",
                          message="activeDeadlineSeconds is not supported for StatefulSet pods",
                          field_path=".activeDeadlineSeconds")
    spec = _object("The pod spec; fields not listed here are kept as written.", {
        "restartPolicy": _string("Always: a StatefulSet's pods are replaced by the controller, never left to exit.",
                                 ("Always",), default="Always"),
        "terminationGracePeriodSeconds": _int("Seconds a deleted pod has to stop before it is killed.", 0,
                                              int64=True),
        "dnsPolicy": _string("How the pods resolve names.", DNS_POLICIES),
        "activeDeadlineSeconds": _int("Not allowed in a StatefulSet's pods.", int64=True),
        "containers": _containers("The pod's containers, at least one.", "app") | {"minItems": 1},
        "initContainers": _containers("Containers run to completion, in order, before the pod's containers.",
                                      "init"),
    }, keep=True, required=["containers"])
    return spec | _rules(unique, no_deadline)


def _template() -> dict[str, Any]:
    return _object("The pod template every pod of the set is made from; a change rolls the set.", {
        "metadata": _object("The pods' labels and annotations; other metadata is kept as written.", {
            "labels": _labels("The pods' labels; the selector must match them."),
            "annotations": _annotations("The pods' annotations."),
        }, keep=True),
        "spec": _pod_spec(),
    }, required=["spec"])


def _string_map(description: str) -> dict[str, Any]:
    return {"description": description, "type": "object", "additionalProperties": {"type": "string"}}


def _plain_selector(description: str) -> dict[str, Any]:
    return _object(description, {
        "matchLabels": _string_map("Labels a volume must have, each with this value."),
        "matchExpressions": {"description": "Requirements a volume's labels must meet.", "type": "array",
                             "items": _object("A requirement: a key, an operator and values.", {
                                 "key": _string("The label key."), "operator": _string("In, NotIn, Exists or "
                                                                                      "DoesNotExist."),
                                 "values": {"description": "The values, for In and NotIn.", "type": "array",
                                            "items": {"type": "string"}}}, required=["key", "operator"])},
    })


def _reference(description: str, *, namespaced: bool = False) -> dict[str, Any]:
    fields = {"apiGroup": _string("The group of the referenced object (empty: the core group)."),
              "kind": _string("The kind of the referenced object."),
              "name": _string("The name of the referenced object.")}
    if namespaced:
        fields["namespace"] = _string("The namespace of the referenced object.")
    return _object(description, fields, required=["kind", "name"])


def _claim_template() -> dict[str, Any]:
    # Declared in full (the PersistentVolumeClaimSpec of 1.37), no preserved unknown fields: what a template holds
    # is what its claims get, so a misspelt field is refused rather than kept and ignored.
    return _object("A PersistentVolumeClaim template: each pod gets a claim <name>-<set>-<ordinal> made from it.", {
        "apiVersion": _string("v1."),
        "kind": _string("PersistentVolumeClaim."),
        "metadata": _object("The claim's name (part of each claim's name), labels and annotations.", {
            "name": _string("A DNS-1123 label, unique among the set's claim templates.", maxLength=63,
                            pattern=DNS_LABEL),
            "labels": _string_map("Labels every claim gets."),
            "annotations": _string_map("Annotations every claim gets."),
        }, required=["name"]),
        "spec": _object("The claim's spec.", {
            "accessModes": {"description": "ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod.",
                            "type": "array", "items": {"type": "string"}},
            "storageClassName": _string("The StorageClass that provisions the volume."),
            "volumeMode": _string("Filesystem or Block.", default="Filesystem"),
            "volumeName": _string("A PersistentVolume to bind to, by name."),
            "volumeAttributesClassName": _string("The VolumeAttributesClass of the volume."),
            "resources": _resources("claim") | {"description": CLAIM_STORAGE},
            "selector": _plain_selector("Which volumes the claim may bind to."),
            "dataSource": _reference("A snapshot or claim to fill the volume from."),
            "dataSourceRef": _reference("Any object to fill the volume from.", namespaced=True),
        }),
    }, required=["metadata"])


def _rolling_block(block: str, owner: str) -> dict[str, Any]:
    return _object(f"Parameters of the {owner} strategy; only allowed with type {owner}.", {
        "partition": _int("Pods with an ordinal at or above the partition are updated; the others keep their "
                          "revision (a canary).", COUNT_MINIMUMS["updateStrategy.{block}.partition"], default=0),
        "maxUnavailable": {"description": "KEP-961: how many pods may be unavailable during the update, an integer "
                                          "of at least 1 or a percentage of replicas ('1%' to '100%').",
                           "x-kubernetes-int-or-string": True, "maxLength": 64, "default": 1,
                           "anyOf": [{"type": "integer"}, {"type": "string"}], **_rules(max_unavailable_rule())},
        "podProgressTimeoutSeconds": _int(
            "KEP-3541: seconds an updated pod may take to become ready before it counts as failed and the update "
            "moves on (EnforcedRollingUpdate) or stops.",
            COUNT_MINIMUMS["updateStrategy.{block}.podProgressTimeoutSeconds"]),
        "podUpdatePolicy": _string(
            "How an outdated pod is brought to the update revision (OpenKruise's Advanced StatefulSet): ReCreate "
            "deletes and creates it; InPlaceIfPossible updates its container images in place (same uid, node, IP "
            "and volumes; the containers restart) when the revisions differ only in images, else recreates it; "
            "InPlaceOnly does the same but halts the rollout, touching no pod, when a pod cannot be updated in place.",
            ENUMS["updateStrategy.{block}.podUpdatePolicy"], default=RECREATE_POLICY),
        "steps": steps_schema(),  # canary steps (crd_steps.py)
    })


def _selector() -> dict[str, Any]:
    requirement = _object("A requirement: a label key, an operator and values.", {
        "key": _string("The label key the requirement applies to.", maxLength=316),
        "operator": _string("How the key relates to the values.", ("In", "NotIn", "Exists", "DoesNotExist")),
        "values": {"description": "The values, for In and NotIn; empty for Exists and DoesNotExist.",
                   "type": "array", "maxItems": MAX_LIST,
                   "items": {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE}},
    }, required=["key", "operator"]) | _rules(
        CelRule(rule=qualified_name_rule("self.key"), message="must be a qualified name", field_path=".key"),
        CelRule(rule="!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
                message="must be specified when `operator` is 'In' or 'NotIn'", reason="FieldValueRequired",
                field_path=".values"),
        CelRule(rule="!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
                message="may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                reason="FieldValueForbidden", field_path=".values"))
    return _object("Which pods the set owns: it must match the template's labels. Immutable.", {
        "matchLabels": _labels("Labels a pod must have, each with this value."),
        "matchExpressions": {"description": "Requirements a pod's labels must meet, all of them.", "type": "array",
                             "maxItems": MAX_LIST, "items": requirement},
    }) | {"x-kubernetes-map-type": "atomic"} | _rules(CelRule(
        rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || "
             "(has(self.matchExpressions) && size(self.matchExpressions) > 0)",
        message="empty selector is invalid for statefulset"))


def _strategy() -> dict[str, Any]:
    blocks = {block: _rolling_block(block, owner) for block, owner in BLOCK_OWNERS}
    return _object("How pods move to a new template.", {
        "type": _string("RollingUpdate (one ordinal at a time, highest first), OnDelete (only pods you delete), "
                        "Recreate (all pods down, then up; KEP-3541) or EnforcedRollingUpdate (a rolling update "
                        "that moves past a pod that does not become ready; KEP-3541).",
                        ENUMS["updateStrategy.type"], default=ROLLING_UPDATE),
        **blocks,
    }, default={"type": ROLLING_UPDATE, "rollingUpdate": {}}) | _rules(*strategy_block_rules())


def spec_schema() -> dict[str, Any]:
    when = ("Retain keeps the claims; Delete deletes them")
    dns = CelRule(rule=f"self == '' || (self.size() <= 63 && self.matches('{DNS_LABEL}'))",
                  message="a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                          "must start and end with an alphanumeric character (at most 63 characters)")
    return _object("The desired state of the set: the apps/v1 StatefulSet spec plus the seeds' strategies.", {
        "replicas": _int("How many pods the set runs.", COUNT_MINIMUMS["replicas"], default=1),
        "minReadySeconds": _int("Seconds a ready pod must stay ready to count as available.",
                                COUNT_MINIMUMS["minReadySeconds"], default=0),
        "revisionHistoryLimit": _int("How many old revisions (ControllerRevisions) are kept for rollback.",
                                     default=10),
        "progressDeadlineSeconds": _int("Seconds a rollout may go without progress before the set's Progressing "
                                        "condition turns False (ProgressDeadlineExceeded).",
                                        COUNT_MINIMUMS["progressDeadlineSeconds"]),
        "paused": {"description": "Deployment's pause: while true the controller starts no new rollout step (no "
                             "pod is deleted to move it to the update revision; steps under way finish); scaling "
                             "and repairs still happen, Progressing says RolloutPaused and the progress deadline "
                             "does not run. Setting it back to false resumes and restarts the deadline clock.",
                   "type": "boolean"},
        "lifecycle": lifecycle_schema(), "roleProbe": role_probe_schema(),
        "serviceName": _string("The headless Service that gives the pods their DNS names (<pod>.<service>). "
                               "Immutable.", maxLength=253) | _rules(dns),
        "podManagementPolicy": _string("OrderedReady (one pod at a time, in ordinal order) or Parallel. Immutable.",
                                       ENUMS["podManagementPolicy"], default="OrderedReady"),
        "ordinals": _object("Where the pods' ordinals start.", {
            "start": _int("The first ordinal (pods are <set>-<start> up).", COUNT_MINIMUMS["ordinals.start"])}),
        "reserveOrdinals": {"description": "Ordinals no pod takes (OpenKruise's reserveOrdinals): the replicas run "
                                           "on the lowest ordinals from ordinals.start that are not listed, so 3 "
                                           "replicas with [1] run 0, 2 and 3. Changing the list moves pods: one "
                                           "at a newly reserved ordinal is deleted as a scale-in would delete it.",
                            "type": "array", "x-kubernetes-list-type": "set",
                            "items": _int("An absolute ordinal.", 0)},
        "selector": _selector(),
        "template": _template(),
        "volumeClaimTemplates": {"description": CLAIM_TEMPLATES,
                                 "type": "array", "maxItems": MAX_LIST, "items": _claim_template(),
                                 **_rules(CelRule(rule="self.all(c, self.exists_one(d, d.metadata.name == "
                                                       "c.metadata.name))", message="names must be unique",
                                                  reason="FieldValueDuplicate"), claim_storage_shrink_rule())},
        "updateStrategy": _strategy(),
        "volumeClaimUpdatePolicy": claim_update_policy_schema(),
        "persistentVolumeClaimRetentionPolicy": _object("What happens to the pods' claims.", {
            "whenDeleted": _string(f"When the set is deleted: {when}.",
                                   ENUMS["persistentVolumeClaimRetentionPolicy.whenDeleted"], default="Retain"),
            "whenScaled": _string(f"When the set scales down: {when}.",
                                  ENUMS["persistentVolumeClaimRetentionPolicy.whenScaled"], default="Retain"),
        }),
    }, required=["selector", "template"]) | _rules(selector_matches_template_rule(), immutable_spec_rule())


def status_schema() -> dict[str, Any]:
    counts = {"observedGeneration": "The generation the controller last acted on.",
              "replicas": "Pods the set has (created, terminating included).",
              "readyReplicas": "Pods that are ready.",
              "currentReplicas": "Pods at the current revision.",
              "updatedReplicas": "Pods at the update revision.",
              "availableReplicas": "Pods ready for at least minReadySeconds.",
              "collisionCount": "Revision-name collisions seen (makes revision names unique)."}
    props: dict[str, Any] = {name: _int(text, int64=name == "observedGeneration") for name, text in counts.items()}
    props.update({"currentRevision": _string("The revision the not-yet-updated pods are at."),
                  "updateRevision": _string("The revision the pods are moving to."),
                  "labelSelector": _string("The selector as a string, for the scale subresource (HPA, kubectl "
                                           "scale).")})
    props["conditions"] = {"description": "Progressing, Available and Ready, as a Deployment has them.",
                           "type": "array", "items": _object("A condition of the set.", {
                               "type": _string("The condition's type."),
                               "status": _string("True, False or Unknown.", ("True", "False", "Unknown")),
                               "reason": _string("One word (CamelCase) for why."),
                               "message": _string("Why, for people."),
                               "lastTransitionTime": _string("When the status last changed.", format="date-time"),
                               "observedGeneration": _int("The generation the condition was set for.", int64=True),
                           }, keep=True, required=["type", "status"])}
    props["volumeClaimTemplates"] = claim_status_schema()
    # Unknown status fields are kept, so a newer controller's additions survive an older CRD.
    return _object("What the controller observed.", props, keep=True)


PRINTER_COLUMNS: list[dict[str, Any]] = [dict(column) for column in ROLLWISE_PRINTER_COLUMNS]


def crd() -> dict[str, Any]:
    schema = _object("A StatefulSet run by rollwise: the apps/v1 spec plus maxUnavailable (KEP-961), Recreate, "
                     "EnforcedRollingUpdate and podProgressTimeoutSeconds (KEP-3541).", {
                         "apiVersion": _string("apps.rollwise.dev/v1alpha1."),
                         "kind": _string("StatefulSet."),
                         # only name and generateName may be restricted here (structural schema rules)
                         "metadata": _object("The object's name, namespace, labels and annotations.", {
                             "name": _string("A lowercase RFC 1123 label of at most 63 characters: it becomes the "
                                             "pods' hostname prefix.", maxLength=63, pattern=DNS_LABEL)}),
                         "spec": spec_schema(),
                         "status": status_schema(),
                     }, required=["spec"])
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
                "schema": {"openAPIV3Schema": schema},
            }],
        },
    }
