"""API-server validation of the other kinds rollwise creates or reads: Pods (the fields the kubelet and the
controllers rely on), and the object metadata of PersistentVolumeClaims, Services, Leases and ControllerRevisions.

StatefulSets have their own, complete module (``validation``). Field-level rules are ``validation_rules``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rollwise.api.analysis import ANALYSIS_API_VERSION, ANALYSIS_KINDS
from rollwise.api.analysis_validation import check_analysis_spec
from rollwise.api.errors import FieldError
from rollwise.api.validation_pods import check_containers
from rollwise.api.validation_rules import (
    check_annotation_keys,
    check_dns_label,
    check_enum,
    check_int,
    check_labels,
    type_error,
)

__all__ = ["OBJECT_API_VERSIONS", "check_lease_spec", "check_object_references", "validate_object",
           "validate_pod_spec"]

# kind -> the apiVersion rollwise serves it under
OBJECT_API_VERSIONS = {
    "Pod": "v1",
    "PersistentVolumeClaim": "v1",
    "Service": "v1",
    "Lease": "coordination.k8s.io/v1",
    "ControllerRevision": "apps/v1",
    **dict.fromkeys(ANALYSIS_KINDS, ANALYSIS_API_VERSION),
}
# Services and Pods' hostnames are DNS labels; the others are DNS-1123 subdomains (upstream NameIsDNSSubdomain).
_LABEL_NAMED = ("Service",)
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MAX = 253
_RESTART_POLICIES = ("Always", "OnFailure", "Never")


def _check_subdomain(value: object, path: str) -> list[FieldError]:
    if not isinstance(value, str):
        return [type_error(path, value, "a string")]
    if len(value) > _SUBDOMAIN_MAX or not _SUBDOMAIN.fullmatch(value):
        return [FieldError(path=path, value=value, rule="a lowercase RFC 1123 subdomain must consist of lower case "
                           "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                           "character (e.g. 'example.com')")]
    return []


def _check_metadata(obj: Mapping[str, Any], kind: str) -> list[FieldError]:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return [type_error("metadata", meta, "a mapping")]
    errors: list[FieldError] = []
    name = meta.get("name")
    if name is None or name == "":
        errors.append(FieldError(path="metadata.name", kind="Required value", rule="name is required"))
    elif kind in _LABEL_NAMED:
        errors += check_dns_label(name, "metadata.name")
    else:
        errors += _check_subdomain(name, "metadata.name")
    if meta.get("namespace") not in (None, ""):
        errors += check_dns_label(meta["namespace"], "metadata.namespace")
    if meta.get("labels") is not None:
        errors += check_labels(meta["labels"], "metadata.labels")
    if meta.get("annotations") is not None:
        errors += check_annotation_keys(meta["annotations"], "metadata.annotations")
    return errors


def check_object_references(meta: object) -> list[FieldError]:
    """``metadata.ownerReferences`` and ``metadata.finalizers`` of any object, which the garbage collector and every
    controller read (upstream ValidateOwnerReferences: the four identifying fields, at most one controller)."""
    if not isinstance(meta, Mapping):
        return []
    errors: list[FieldError] = []
    refs = meta.get("ownerReferences")
    if refs is not None and not isinstance(refs, list):
        errors.append(type_error("metadata.ownerReferences", refs, "a list"))
    controllers = 0
    for i, ref in enumerate(refs if isinstance(refs, list) else ()):
        path = f"metadata.ownerReferences[{i}]"
        if not isinstance(ref, Mapping):
            errors.append(type_error(path, ref, "a mapping"))
            continue
        for field in ("apiVersion", "kind", "name", "uid"):
            value = ref.get(field)
            if value is None or value == "":
                errors.append(FieldError(path=f"{path}.{field}", kind="Required value", rule=f"{field} is required"))
            elif not isinstance(value, str):
                errors.append(type_error(f"{path}.{field}", value, "a string"))
        for field in ("controller", "blockOwnerDeletion"):
            if ref.get(field) is not None and not isinstance(ref.get(field), bool):
                errors.append(type_error(f"{path}.{field}", ref.get(field), "true or false"))
        controllers += ref.get("controller") is True
    if controllers > 1:
        errors.append(FieldError(path="metadata.ownerReferences", value=controllers,
                                 rule="Only one reference can have Controller set to true"))
    finalizers = meta.get("finalizers")
    if finalizers is not None and (not isinstance(finalizers, list) or not all(isinstance(f, str) for f in finalizers)):
        errors.append(type_error("metadata.finalizers", finalizers, "a list of strings"))
    return errors


def validate_object(obj: Mapping[str, Any]) -> list[FieldError]:
    """Metadata, apiVersion and the fields rollwise reads of an object of a kind in ``OBJECT_API_VERSIONS``."""
    kind = str(obj.get("kind"))
    errors = check_enum(obj.get("apiVersion"), "apiVersion", (OBJECT_API_VERSIONS[kind],))
    errors += _check_metadata(obj, kind)
    spec = obj.get("spec")
    if kind == "Pod":
        return errors + validate_pod_spec(spec, "spec")
    if kind in ANALYSIS_KINDS:
        return errors + check_analysis_spec(kind, spec)
    if kind == "ControllerRevision":
        if obj.get("revision") is not None:
            errors += check_int(obj["revision"], "revision", minimum=0)
        return errors
    if spec is not None and not isinstance(spec, Mapping):
        return [*errors, type_error("spec", spec, "a mapping")]
    if kind == "Lease":
        return errors + check_lease_spec(spec, "spec")
    for field, expected in _SPEC_TYPES.get(kind, ()):
        value = (spec or {}).get(field)
        if value is not None and not _is(value, expected):
            errors.append(type_error(f"spec.{field}", value, expected))
    return errors


def check_lease_spec(spec: object, path: str) -> list[FieldError]:
    """A Lease's spec as kube-apiserver takes it: the typed decode (``holderIdentity`` a string, the counts int32s)
    and ``ValidateLeaseSpec`` (``pkg/apis/coordination/validation/validation.go``: ``leaseDurationSeconds`` greater
    than 0, ``leaseTransitions`` not negative). Every reader of a Lease (the elector, ``up``'s stand-down) may then
    take these fields as they are."""
    if spec is None:
        return []
    if not isinstance(spec, Mapping):
        return [type_error(path, spec, "a mapping")]
    errors: list[FieldError] = []
    holder = spec.get("holderIdentity")
    if holder is not None and not isinstance(holder, str):
        errors.append(type_error(f"{path}.holderIdentity", holder, "a string"))
    for field, minimum in (("leaseDurationSeconds", 1), ("leaseTransitions", 0)):
        if spec.get(field) is not None:
            errors += check_int(spec[field], f"{path}.{field}", minimum=minimum)
    return errors


# The spec fields rollwise reads from these kinds, by JSON type.
_SPEC_TYPES = {
    "PersistentVolumeClaim": (("resources", "a mapping"), ("accessModes", "a list"),
                              ("storageClassName", "a string"), ("volumeName", "a string")),
    "Service": (("ports", "a list"), ("selector", "a mapping"), ("clusterIP", "a string")),
}


def _is(value: object, expected: str) -> bool:
    if expected == "a string":
        return isinstance(value, str)
    if expected == "an integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, Mapping if expected == "a mapping" else list)


def validate_pod_spec(spec: object, path: str) -> list[FieldError]:
    """What the kubelet and the controllers read from a pod spec: containers with a name and an image, and the
    timings (``terminationGracePeriodSeconds`` >= 0: a negative grace period would keep the pod forever)."""
    if spec is None:
        return [FieldError(path=path, kind="Required value", rule="a pod spec is required")]
    if not isinstance(spec, Mapping):
        return [type_error(path, spec, "a mapping")]
    errors: list[FieldError] = []
    if spec.get("terminationGracePeriodSeconds") is not None:
        errors += check_int(spec["terminationGracePeriodSeconds"], f"{path}.terminationGracePeriodSeconds", minimum=0)
    if spec.get("activeDeadlineSeconds") is not None:
        errors += check_int(spec["activeDeadlineSeconds"], f"{path}.activeDeadlineSeconds", minimum=1)
    if spec.get("restartPolicy") is not None:
        errors += check_enum(spec["restartPolicy"], f"{path}.restartPolicy", _RESTART_POLICIES)
    return errors + check_containers(spec, path)
